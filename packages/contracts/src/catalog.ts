export * from "./gen/avatar/catalog/v1/catalog_pb.js";
