import { randomUUID } from "node:crypto";
import type { AgentsService } from "@avatar/contracts/agents";
import { invalidRequest, type SecretDestinations } from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Changed, unannounced } from "../changes.js";
import { checkEgressUrl, checkName, checkText, missingResource } from "../checks.js";
import { limits } from "../limits.js";
import { ownLlmConfiguration, ownSecret } from "../references.js";
import type { Db, SecretRow } from "../schema.js";
import { secretTypeToProto } from "../secrets/mapping.js";
import { llmConfigurationToProto } from "./mapping.js";
import * as repo from "./repository.js";

type LlmConfigurationRpcs = Pick<
  ServiceImpl<typeof AgentsService>,
  | "createLlmConfiguration"
  | "listLlmConfigurations"
  | "getLlmConfiguration"
  | "updateLlmConfiguration"
  | "deleteLlmConfiguration"
>;

const FIELD = "llm_configuration_id";
const checkBaseUrl = (value: string) =>
  checkEgressUrl(checkText(value, "base_url", 1, limits.baseUrl), "base_url");

/** A language model behind any OpenAI-compatible chat-completions endpoint, on a key of the space. */
export function llmConfigurationRpcs(
  db: Db,
  destinations: SecretDestinations,
  changed: Changed = unannounced,
): LlmConfigurationRpcs {
  /** The configuration's key is sent to its base_url: only where the secret may go (finding 2). */
  const checkDestination = (secret: SecretRow, baseUrl: string) => {
    const binding = { secretType: secretTypeToProto[secret.secret_type], allowedHosts: secret.allowed_hosts };
    if (destinations.allows(binding, baseUrl)) return;
    const host = new URL(baseUrl).hostname;
    throw invalidRequest(
      `base_url: the secret's key may only be sent to its provider's hosts or to hosts bound to the secret ` +
        `(allowed_hosts when it was stored); ${host} is neither`,
      { field: "base_url" },
    );
  };
  return {
    async createLlmConfiguration(req) {
      const displayName = checkName(req.displayName, "display_name", limits.llmDisplayName);
      const modelName = checkName(req.modelName, "model_name", limits.llmModelName);
      const baseUrl = checkBaseUrl(req.baseUrl);
      const secret = await ownSecret(db, req.spaceId, req.secretId, "secret_id");
      checkDestination(secret, baseUrl);
      const row = await repo.insertLlmConfiguration(db, {
        id: randomUUID(),
        space_id: req.spaceId,
        display_name: displayName,
        model_name: modelName,
        secret_id: secret.id,
        base_url: baseUrl,
      });
      return { llmConfiguration: llmConfigurationToProto(row) };
    },

    async listLlmConfigurations(req) {
      const rows = await repo.listLlmConfigurations(db, req.spaceId);
      return { llmConfigurations: rows.map(llmConfigurationToProto) };
    },

    async getLlmConfiguration(req) {
      const row = await ownLlmConfiguration(db, req.spaceId, req.llmConfigurationId, FIELD);
      return { llmConfiguration: llmConfigurationToProto(row) };
    },

    async updateLlmConfiguration(req) {
      const current = await ownLlmConfiguration(db, req.spaceId, req.llmConfigurationId, FIELD);
      const changes: repo.LlmConfigurationChanges = {};
      if (req.displayName !== undefined) {
        changes.display_name = checkName(req.displayName, "display_name", limits.llmDisplayName);
      }
      if (req.modelName !== undefined) {
        changes.model_name = checkName(req.modelName, "model_name", limits.llmModelName);
      }
      if (req.baseUrl !== undefined) changes.base_url = checkBaseUrl(req.baseUrl);
      if (req.secretId !== undefined || req.baseUrl !== undefined) {
        const secret = await ownSecret(db, req.spaceId, req.secretId ?? current.secret_id, "secret_id");
        checkDestination(secret, changes.base_url ?? current.base_url);
        changes.secret_id = secret.id;
      }
      const row = await repo.updateLlmConfiguration(db, req.spaceId, current.id, changes);
      if (!row) throw missingResource("LLM configuration", FIELD);
      await changed(row.id);
      return { llmConfiguration: llmConfigurationToProto(row) };
    },

    async deleteLlmConfiguration(req) {
      const { id } = await ownLlmConfiguration(db, req.spaceId, req.llmConfigurationId, FIELD);
      if (!(await repo.deleteLlmConfiguration(db, req.spaceId, id))) {
        throw missingResource("LLM configuration", FIELD);
      }
      await changed(id);
      return {};
    },
  };
}
