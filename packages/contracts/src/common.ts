// Generated code lives in gen/ (buf generate); these files give each proto package one import path.
export * from "./gen/avatar/common/v1/errors_pb.js";
export * from "./gen/avatar/common/v1/paging_pb.js";
export * from "./gen/avatar/common/v1/session_pb.js";
