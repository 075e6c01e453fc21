import { type LlmConfiguration, LlmConfigurationSchema } from "@avatar/contracts/agents";
import { toTimestamp } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { LlmConfigurationRow } from "../schema.js";

export function llmConfigurationToProto(row: LlmConfigurationRow): LlmConfiguration {
  return create(LlmConfigurationSchema, {
    id: row.id,
    spaceId: row.space_id,
    displayName: row.display_name,
    modelName: row.model_name,
    secretId: row.secret_id,
    baseUrl: row.base_url,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  });
}
