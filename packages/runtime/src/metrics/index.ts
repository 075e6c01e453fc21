export * from "./bus.js";
export * from "./catalog.js";
export * from "./connect.js";
export * from "./db-pool.js";
export * from "./registry.js";
export * from "./sampled.js";
export * from "./serve.js";
export * from "./subjects.js";
