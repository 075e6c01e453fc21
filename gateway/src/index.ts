export { build, type Gateway, type GatewayDeps } from "./app.js";
export { type GatewayConfig, gatewaySettings, readGatewayConfig } from "./config.js";
export { type CounterStore, MemoryCounterStore, openKvCounterStore, RateLimiter } from "./ratelimit/index.js";
export { routes } from "./routes.js";
export { type RunningGateway, startGateway } from "./server.js";
