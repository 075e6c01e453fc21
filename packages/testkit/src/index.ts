export * from "./direct-calls.js";
export * from "./logs.js";
export * from "./nats-server.js";
export * from "./postgres.js";
export * from "./processes.js";
export * from "./service-db.js";
export * from "./topology.js";
export * from "./waits.js";
