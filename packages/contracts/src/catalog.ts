export * from "./gen/avatar/catalog/v1/catalog_pb.js";
export * from "./gen/avatar/catalog/v1/look_pb.js";
