/**
 * The `agent_configuration` of a stored voice agent: one model per `agent_type`, chosen by that sibling
 * field (interface.md, "Voice agent reference" and "LITE configuration objects"). Provider vocabularies
 * (voice settings, STT providers, managed models, vendorB realtime models and voices) are the token
 * request's, imported so that one definition serves both.
 *
 * A configuration carrying fields that only another agent type takes (e.g. `secret_id` for a
 * managed agent) does not match its type: 422 value_error at ["body", "agent_configuration"]. Keys that
 * no agent type knows are ignored, as everywhere else.
 */
import * as s from "../schema/index.js";
import type { Loc, ParseResult } from "../schema/issues.js";
import type { Mode } from "../schema/schema.js";
import {
  DYNAMIC_VARIABLE_KEY_MAX,
  DYNAMIC_VARIABLE_VALUE_MAX,
  DYNAMIC_VARIABLES_MAX_ENTRIES,
  LlmSettings,
  SttConfig,
  VendorBRealtimeConfig,
  VoiceSettings,
} from "./session-token.schema.js";

export const AGENT_TYPES = ["managed_agent", "vendorA_agent", "vendorD_agent", "vendorB_agent"] as const;
export type AgentTypeName = (typeof AGENT_TYPES)[number];
export const AgentTypeEnum = s.enumOf(AGENT_TYPES, { name: "AgentTypeEnum" });

/** Ids and names kept by a provider (its agent ids, its voice ids). */
const providerId = () => s.string({ minLength: 1, maxLength: 255 });

export const ManagedAgentConfiguration = s.object("ManagedAgentConfiguration", {
  voice_id: s.uuid().nullable().optional(),
  context_id: s.uuid().nullable().optional(),
  language: s.string({ minLength: 1, maxLength: 16 }).nullable().optional(),
  voice_settings: VoiceSettings.nullable().optional(),
  stt_config: SttConfig.nullable().optional(),
  llm_settings: LlmSettings.nullable()
    .optional()
    .describe("Absent: the managed default model (vendorB gpt-5.4-nano)."),
  llm_configuration_id: s.uuid().nullable().optional(),
  dynamic_variables: s
    .record(s.string({ maxLength: DYNAMIC_VARIABLE_VALUE_MAX }), {
      maxEntries: DYNAMIC_VARIABLES_MAX_ENTRIES,
      keyMaxLength: DYNAMIC_VARIABLE_KEY_MAX,
    })
    .nullable()
    .optional(),
});

export const VendorAAgentConfiguration = s.object("VendorAAgentConfiguration", {
  secret_id: s.uuid().describe("A stored secret of type VENDORA_API_KEY."),
  agent_id: providerId(),
  voice_id: providerId().nullable().optional().describe("A vendorA voice overriding the agent's own."),
});

export const VendorDAgentConfiguration = s.object("VendorDAgentConfiguration", {
  secret_id: s.uuid().describe("A stored secret of type VENDORD_API_KEY."),
  agent_id: providerId(),
});

const configurations = {
  managed_agent: ManagedAgentConfiguration,
  vendorA_agent: VendorAAgentConfiguration,
  vendorD_agent: VendorDAgentConfiguration,
  vendorB_agent: VendorBRealtimeConfig,
} as const;

export type AgentConfigurationValue = {
  [T in AgentTypeName]: { type: T; value: s.Infer<(typeof configurations)[T]> };
}[AgentTypeName];

/** Keys some agent type takes that `type` does not. */
function foreignKeys(type: AgentTypeName): Set<string> {
  const own = new Set(Object.keys(configurations[type].shape));
  const foreign = new Set<string>();
  for (const other of AGENT_TYPES) {
    for (const key of Object.keys(configurations[other].shape)) if (!own.has(key)) foreign.add(key);
  }
  return foreign;
}

/** Validates `input` as the configuration of `type`, at `loc`. */
export function validateConfiguration(
  type: AgentTypeName,
  input: unknown,
  loc: Loc,
  mode?: Mode,
): ParseResult<AgentConfigurationValue> {
  const result = configurations[type].validate(input, loc, mode);
  if (!result.ok) return result;
  const foreign = foreignKeys(type);
  const misplaced = Object.keys(input as object).filter((key) => foreign.has(key));
  if (misplaced.length > 0) {
    const message = `agent_configuration does not match agent_type ${type}: ${misplaced.join(", ")} belong to another agent type`;
    return { ok: false, issues: [s.valueError(loc, input, message)] };
  }
  return { ok: true, value: { type, value: result.value } as AgentConfigurationValue };
}

export const configurationJsonSchemaMembers = Object.values(configurations);
