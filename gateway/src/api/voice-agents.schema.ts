/**
 * Bodies of POST /v1/voice_agents and PATCH /v1/voice_agents/{agent_id}: the agent's fields plus an
 * `agent_configuration` validated as the model of its `agent_type`. Issues come back in field order,
 * all at once, as pydantic reports a model's.
 */
import * as s from "../schema/index.js";
import {
  failure,
  type Loc,
  modelAttributesType,
  type ParseResult,
  type ValidationIssue,
} from "../schema/issues.js";
import type { JsonSchema, JsonSchemaContext } from "../schema/json-schema.js";
import { isPlainObject, type ObjectSchema, type Shape } from "../schema/object.js";
import { titleFromName } from "../schema/py-format.js";
import { type Mode, Schema } from "../schema/schema.js";
import {
  AGENT_TYPES,
  type AgentConfigurationValue,
  AgentTypeEnum,
  type AgentTypeName,
  configurationJsonSchemaMembers,
  validateConfiguration,
} from "./agent-configuration.js";

export const AGENT_NAME_MAX = 255;

export interface VoiceAgentBody {
  name?: string;
  agent_type?: AgentTypeName;
  is_public?: boolean;
  /** Validated against agent_type. Absent for a managed agent created without one. */
  configuration?: AgentConfigurationValue;
  /** PATCH only: a configuration sent without agent_type; checked once the stored type is known. */
  untypedConfiguration?: Record<string, unknown>;
}

const FIELD_ORDER = ["name", "agent_type", "agent_configuration", "is_public"];
const CONFIGURATION_DESCRIPTION =
  "The model of agent_type: ManagedAgentConfiguration (managed_agent, optional), VendorAAgentConfiguration " +
  "(vendorA_agent), VendorDAgentConfiguration (vendorD_agent) or VendorBRealtimeConfig (vendorB_agent).";

const isAgentType = (value: unknown): value is AgentTypeName =>
  typeof value === "string" && (AGENT_TYPES as readonly string[]).includes(value);

class VoiceAgentBodySchema<S extends Shape> extends Schema<VoiceAgentBody> {
  constructor(
    readonly name: string,
    readonly fields: ObjectSchema<S>,
    /** PATCH: every field optional, null read as absent; agent_type and agent_configuration go together. */
    readonly partial: boolean,
  ) {
    super();
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<VoiceAgentBody> {
    if (!isPlainObject(input)) return failure(modelAttributesType(loc, input));
    const issues: ValidationIssue[] = [];
    const out: VoiceAgentBody = {};
    const fields = this.fields.validate(input, loc, mode);
    if (fields.ok) {
      for (const [key, value] of Object.entries(fields.value)) {
        if (value !== null && value !== undefined) Object.assign(out, { [key]: value });
      }
    } else {
      issues.push(...fields.issues);
    }

    const configLoc = [...loc, "agent_configuration"];
    const raw = Object.hasOwn(input, "agent_configuration") ? input.agent_configuration : undefined;
    const rawType = Object.hasOwn(input, "agent_type") ? input.agent_type : undefined;
    const type = isAgentType(rawType) ? rawType : undefined;
    if (raw === undefined || raw === null) {
      const required = this.partial ? type !== undefined : type !== undefined && type !== "managed_agent";
      if (required) issues.push(s.missing(configLoc, input));
    } else if (type !== undefined) {
      const result = validateConfiguration(type, raw, configLoc, mode);
      if (result.ok) out.configuration = result.value;
      else issues.push(...result.issues);
    } else if (this.partial && (rawType === undefined || rawType === null)) {
      if (isPlainObject(raw)) out.untypedConfiguration = raw;
      else issues.push(modelAttributesType(configLoc, raw));
    }

    if (issues.length > 0) {
      const rank = (i: ValidationIssue) => FIELD_ORDER.indexOf(String(i.loc[loc.length]));
      return failure(
        ...issues
          .map((i, n) => ({ i, n }))
          .sort((a, b) => rank(a.i) - rank(b.i) || a.n - b.n)
          .map((x) => x.i),
      );
    }
    return { ok: true, value: out };
  }

  protected kindLabel(): string {
    return this.name;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return ctx.ref(this.name, () => {
      const properties: Record<string, JsonSchema> = {};
      for (const key of FIELD_ORDER) {
        const field = this.fields.shape[key];
        if (key === "agent_configuration") {
          properties[key] = {
            oneOf: configurationJsonSchemaMembers.map((member) => ctx.of(member)),
            description: CONFIGURATION_DESCRIPTION,
          };
        } else if (field !== undefined) {
          properties[key] =
            key === "agent_type" ? ctx.of(field) : { ...ctx.of(field), title: titleFromName(key) };
        }
      }
      return {
        type: "object",
        title: this.name,
        properties,
        ...(this.partial ? {} : { required: ["name", "agent_type"] }),
      };
    });
  }
}

const agentName = () => s.string({ minLength: 1, maxLength: AGENT_NAME_MAX });

export const createVoiceAgentBody = new VoiceAgentBodySchema(
  "CreateVoiceAgentRequest",
  s.object("CreateVoiceAgentFields", {
    name: agentName(),
    agent_type: AgentTypeEnum,
    is_public: s.boolean().default(false),
  }),
  false,
);

export const updateVoiceAgentBody = new VoiceAgentBodySchema(
  "UpdateVoiceAgentRequest",
  s.object("UpdateVoiceAgentFields", {
    name: agentName().nullable().optional(),
    agent_type: AgentTypeEnum.nullable().optional(),
    is_public: s.boolean().nullable().optional(),
  }),
  true,
);
