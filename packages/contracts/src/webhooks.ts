export * from "./gen/avatar/webhooks/v1/webhooks_pb.js";
