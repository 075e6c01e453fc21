export * from "./nats-server.js";
export * from "./postgres.js";
