export * from "./gen/avatar/memory/v1/events_pb.js";
export * from "./gen/avatar/memory/v1/memory_pb.js";
