export * from "./gen/avatar/agents/v1/agents_pb.js";
