import { randomUUID } from "node:crypto";
import { type AgentsService, VoiceAgentScope } from "@avatar/contracts/agents";
import { AgentType } from "@avatar/contracts/common";
import { invalidRequest, isUuid } from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Changed, unannounced } from "../changes.js";
import { checkName, missingResource } from "../checks.js";
import { limits } from "../limits.js";
import { type ResolveDeps, readableVoiceAgent } from "../references.js";
import type { AgentTypeValue, VoiceAgentRow } from "../schema.js";
import { resolveConfiguration } from "./configuration.js";
import { agentTypeFromProto, configurationToJson, voiceAgentToProto } from "./mapping.js";
import * as repo from "./repository.js";

type VoiceAgentRpcs = Pick<
  ServiceImpl<typeof AgentsService>,
  "createVoiceAgent" | "updateVoiceAgent" | "listVoiceAgents" | "getVoiceAgent" | "deleteVoiceAgent"
>;

const FIELD = "voice_agent_id";

function agentType(type: AgentType): AgentTypeValue {
  const value = agentTypeFromProto(type);
  if (!value) throw invalidRequest("agent_type is not a known agent type", { field: "agent_type" });
  return value;
}

/** Public agents are readable by every space; only the owner changes or deletes them. */
export function voiceAgentRpcs(deps: ResolveDeps, changed: Changed = unannounced): VoiceAgentRpcs {
  const { db } = deps;

  async function ownAgent(spaceId: string, id: string): Promise<VoiceAgentRow> {
    const row = isUuid(id) ? await repo.findVoiceAgent(db, id.toLowerCase()) : undefined;
    if (!row || row.space_id !== spaceId) throw missingResource("Voice agent", FIELD);
    return row;
  }

  return {
    async createVoiceAgent(req) {
      const type = agentType(req.agentType);
      const name = checkName(req.name, "name", limits.agentName);
      const configuration = await resolveConfiguration(deps, req.spaceId, type, req.agentConfiguration);
      const row = await repo.insertVoiceAgent(db, {
        id: randomUUID(),
        space_id: req.spaceId,
        name,
        agent_type: type,
        configuration: configurationToJson(configuration),
        is_public: req.isPublic,
      });
      return { voiceAgent: voiceAgentToProto(row) };
    },

    async updateVoiceAgent(req) {
      const current = await ownAgent(req.spaceId, req.voiceAgentId);
      const changes: repo.VoiceAgentChanges = {};
      if (req.name !== undefined) changes.name = checkName(req.name, "name", limits.agentName);
      if (req.isPublic !== undefined) changes.is_public = req.isPublic;
      const type = req.agentType === AgentType.UNSPECIFIED ? current.agent_type : agentType(req.agentType);
      if (req.agentConfiguration) {
        const configuration = await resolveConfiguration(deps, req.spaceId, type, req.agentConfiguration);
        changes.agent_type = type;
        changes.configuration = configurationToJson(configuration);
      } else if (type !== current.agent_type) {
        throw invalidRequest("agent_configuration is required when agent_type changes", {
          field: "agent_configuration",
        });
      }
      const row = await repo.updateVoiceAgent(db, req.spaceId, current.id, changes);
      if (!row) throw missingResource("Voice agent", FIELD);
      await changed(row.id);
      return { voiceAgent: voiceAgentToProto(row) };
    },

    async listVoiceAgents(req) {
      const rows = await repo.listVoiceAgents(
        db,
        req.scope === VoiceAgentScope.PUBLIC ? { kind: "public" } : { kind: "space", spaceId: req.spaceId },
      );
      return { voiceAgents: rows.map(voiceAgentToProto) };
    },

    async getVoiceAgent(req) {
      return {
        voiceAgent: voiceAgentToProto(await readableVoiceAgent(db, req.spaceId, req.voiceAgentId, FIELD)),
      };
    },

    async deleteVoiceAgent(req) {
      const current = await ownAgent(req.spaceId, req.voiceAgentId);
      if (!(await repo.deleteVoiceAgent(db, req.spaceId, current.id)))
        throw missingResource("Voice agent", FIELD);
      await changed(current.id);
      return {};
    },
  };
}
