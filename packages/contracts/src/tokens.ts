export * from "./gen/avatar/tokens/v1/tokens_pb.js";
