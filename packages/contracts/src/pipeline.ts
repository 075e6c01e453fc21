export * from "./gen/avatar/pipeline/v1/pipeline_pb.js";
