import { randomUUID } from "node:crypto";
import type { AgentsService } from "@avatar/contracts/agents";
import {
  invalidRequest,
  type Logger,
  MAX_SECRET_HOSTS,
  type Sealer,
  secretHostProblem,
} from "@avatar/runtime";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { type Changed, unannounced } from "../changes.js";
import { checkName, missingResource } from "../checks.js";
import { limits } from "../limits.js";
import { ownSecret } from "../references.js";
import type { Db } from "../schema.js";
import { secretToProto, secretTypeFromProto } from "./mapping.js";
import * as repo from "./repository.js";

type SecretRpcs = Pick<
  ServiceImpl<typeof AgentsService>,
  "createSecret" | "listSecrets" | "getSecret" | "deleteSecret" | "revealSecret"
>;

/**
 * Provider keys, sealed at rest (AES-256-GCM under a configured key, the secret id as context so a
 * sealed value moved to another row does not open). The value goes into no response but RevealSecret's
 * (internal), and into no log line or error message.
 */
export function secretRpcs(db: Db, sealer: Sealer, log: Logger, changed: Changed = unannounced): SecretRpcs {
  return {
    async createSecret(req) {
      const secretType = secretTypeFromProto(req.secretType);
      if (!secretType)
        throw invalidRequest("secret_type is not a known secret type", { field: "secret_type" });
      checkValue(req.secretValue);
      const id = randomUUID();
      const row = await repo.insertSecret(db, {
        id,
        space_id: req.spaceId,
        secret_name: checkName(req.secretName, "secret_name", limits.secretName),
        secret_type: secretType,
        sealed_value: sealer.seal(req.secretValue, id),
        key_id: sealer.currentKeyId,
        allowed_hosts: checkHosts(req.allowedHosts),
      });
      return { secret: secretToProto(row) };
    },

    async listSecrets(req) {
      return { secrets: (await repo.listSecrets(db, req.spaceId)).map(secretToProto) };
    },

    async getSecret(req) {
      return { secret: secretToProto(await ownSecret(db, req.spaceId, req.secretId, "secret_id")) };
    },

    async deleteSecret(req) {
      const { id } = await ownSecret(db, req.spaceId, req.secretId, "secret_id");
      if (!(await repo.deleteSecret(db, req.spaceId, id))) throw missingResource("Secret", "secret_id");
      await changed(id);
      return {};
    },

    async revealSecret(req) {
      const row = await ownSecret(db, req.spaceId, req.secretId, "secret_id");
      let value: string;
      try {
        value = sealer.open(row.sealed_value, row.id);
      } catch (err) {
        // The reason (unknown key, failed authentication) names no part of the value.
        log.error("a stored secret does not open", { secret_id: row.id, key_id: row.key_id, err });
        throw new ConnectError("the secret cannot be opened", Code.Internal);
      }
      return { secret: secretToProto(row), secretValue: value };
    },
  };
}

/** Any provider's key, of any region: only non-empty and of a sane size. The message never quotes it. */
function checkValue(value: string): void {
  if (value.trim().length === 0 || [...value].length > limits.secretValue) {
    throw invalidRequest(`secret_value must have 1 to ${limits.secretValue} characters`, {
      field: "secret_value",
    });
  }
}

/** The hosts bound to a secret: each a host name (or *.domain), at most MAX_SECRET_HOSTS, lower case. */
function checkHosts(hosts: readonly string[]): string[] {
  if (hosts.length > MAX_SECRET_HOSTS) {
    throw invalidRequest(`allowed_hosts takes at most ${MAX_SECRET_HOSTS} hosts`, { field: "allowed_hosts" });
  }
  for (const host of hosts) {
    const problem = secretHostProblem(host);
    if (problem) throw invalidRequest(`allowed_hosts: each host ${problem}`, { field: "allowed_hosts" });
  }
  return [...new Set(hosts.map((h) => h.toLowerCase()))];
}
