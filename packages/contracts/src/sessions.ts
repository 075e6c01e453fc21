export * from "./gen/avatar/sessions/v1/events_pb.js";
export * from "./gen/avatar/sessions/v1/sessions_pb.js";
