export * from "./gen/avatar/memory/v1/memory_pb.js";
