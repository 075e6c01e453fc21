import { SecretType } from "@avatar/contracts/agents";
import { MAX_SECRET_HOSTS, secretHostProblem } from "@avatar/runtime";
import type { RequestContext, RouteResult } from "../http/route.js";
import { presentSecret } from "../present/agents.js";
import * as s from "../schema/index.js";
import type { Loc, ParseResult, ValidationIssue } from "../schema/issues.js";
import type { JsonSchema, JsonSchemaContext } from "../schema/json-schema.js";
import { isPlainObject } from "../schema/object.js";
import { type Mode, Schema } from "../schema/schema.js";
import { spaceOf } from "./principal.js";

/** Secrets: provider keys of the space. A value is accepted once and never shown again. */

export const SECRET_TYPES = [
  "VENDORA_API_KEY",
  "VENDORB_API_KEY",
  "VENDORC_API_KEY",
  "VENDORD_API_KEY",
  "VENDORE_API_KEY",
] as const;

const secretTypeValue: Record<(typeof SECRET_TYPES)[number], SecretType> = {
  VENDORA_API_KEY: SecretType.VENDORA_API_KEY,
  VENDORB_API_KEY: SecretType.VENDORB_API_KEY,
  VENDORC_API_KEY: SecretType.VENDORC_API_KEY,
  VENDORD_API_KEY: SecretType.VENDORD_API_KEY,
  VENDORE_API_KEY: SecretType.VENDORE_API_KEY,
};

/** How a secret value appears in a 422 entry (pydantic shows a SecretStr this way). */
export const MASK = "**********";

/**
 * A body model whose 422 entries never carry the value of `key`: the entry of that field shows the
 * mask, and entries that echo the whole body (e.g. `missing`) show it with that field masked.
 */
class MaskedFieldSchema<T> extends Schema<T> {
  constructor(
    readonly inner: Schema<T>,
    readonly key: string,
  ) {
    super();
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<T> {
    const result = this.inner.validate(input, loc, mode);
    if (result.ok) return result;
    return { ok: false, issues: result.issues.map((i) => this.mask(i, loc)) };
  }

  private mask(issue: ValidationIssue, loc: Loc): ValidationIssue {
    if (issue.loc[loc.length] === this.key && issue.loc.length > loc.length) return { ...issue, input: MASK };
    if (isPlainObject(issue.input) && Object.hasOwn(issue.input, this.key)) {
      return { ...issue, input: { ...issue.input, [this.key]: MASK } };
    }
    return issue;
  }

  protected kindLabel(): string {
    return this.inner.unionLabel();
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return ctx.of(this.inner);
  }
}

export const createSecretBody = new MaskedFieldSchema(
  s.object("CreateSecretRequest", {
    secret_name: s.string({ minLength: 1, maxLength: 255 }),
    secret_value: s
      .string({ minLength: 1, maxLength: 16_384 })
      .describe("The provider's key, of any of its regions. Stored encrypted; never returned."),
    secret_type: s.enumOf(SECRET_TYPES, { name: "SecretTypeEnum" }),
    allowed_hosts: s
      .array(
        s.string({ minLength: 1, maxLength: 253 }).refine(
          (host) => secretHostProblem(host) === undefined,
          (host) => `host ${secretHostProblem(host)}`,
        ),
        { maxItems: MAX_SECRET_HOSTS },
      )
      .nullable()
      .optional()
      .describe(
        "Hosts this key may be sent to besides its provider type's own endpoints (host names, or *.domain), " +
          "e.g. the host of an LLM configuration's base_url. Without them the key goes only to its provider.",
      ),
  }),
  "secret_value",
);

export const secretPath = s.path({ secret_id: s.uuid() });

type Ctx<P = unknown, B = undefined> = RequestContext<P, unknown, B>;

export async function createSecret(
  ctx: Ctx<unknown, s.Infer<typeof createSecretBody>>,
): Promise<RouteResult> {
  const { secret } = await ctx.clients.agents.createSecret({
    spaceId: spaceOf(ctx.principal),
    secretName: ctx.body.secret_name,
    secretValue: ctx.body.secret_value,
    secretType: secretTypeValue[ctx.body.secret_type],
    allowedHosts: ctx.body.allowed_hosts ?? [],
  });
  return { data: secret ? { id: secret.id, secret_name: secret.secretName } : null };
}

export async function listSecrets(ctx: Ctx): Promise<RouteResult> {
  const { secrets } = await ctx.clients.agents.listSecrets({ spaceId: spaceOf(ctx.principal) });
  return { data: secrets.map(presentSecret) };
}

export async function deleteSecret(ctx: Ctx<s.Infer<typeof secretPath>>): Promise<RouteResult> {
  await ctx.clients.agents.deleteSecret({ spaceId: spaceOf(ctx.principal), secretId: ctx.params.secret_id });
  return { data: null };
}
