export * from "./bus.js";
export * from "./connect.js";
export * from "./setup.js";
export * from "./spans.js";
