import type { Tier } from "@avatar/contracts/tokens";
import type { ServiceName } from "@avatar/runtime";
import {
  flag,
  parseCreditAmount,
  parseSeconds,
  parseTier,
  requiredString,
  stringOption,
  uuidOption,
} from "../args.js";
import { type Command, type CommandContext, defineCommand, jsonOnly, jsonOption } from "../command.js";
import { FailedWithHint, UsageError } from "../errors.js";
import { tierNames } from "../tiers.js";
import { spaceView } from "../views.js";

/** The grant made by `space create --credits`: one per space, so re-running that grant counts once. */
export const initialGrantKey = (spaceId: string) => `space-create:${spaceId}`;

const KEY_SHOWN_ONCE = "The API key is shown only this once: store it now.";

const create = defineCommand({
  group: "space",
  name: "create",
  summary: "Create a space and its first API key (printed once)",
  options: {
    name: { type: "string", value: "NAME", required: true, description: "name of the space" },
    tier: { type: "string", value: "TIER", description: `${tierNames.join("|")} (default: free)` },
    credits: {
      type: "string",
      value: "AMOUNT",
      description: "credits to grant the new space (decimal, > 0)",
    },
    "max-session-duration": {
      type: "string",
      value: "SECONDS",
      description: "session-duration limit (default: the tier's)",
    },
    ...jsonOption,
  },
  details: ['With --json, stdout is exactly {"space_id": ..., "api_key": ...}.'],
  parse(values) {
    const tier = stringOption(values, "tier");
    const seconds = stringOption(values, "max-session-duration");
    const credits = stringOption(values, "credits");
    return {
      name: requiredString(values, "name"),
      tier: tier === undefined ? undefined : parseTier(tier),
      maxSessionDuration: seconds === undefined ? undefined : parseSeconds(seconds, "max-session-duration"),
      credits: credits === undefined ? undefined : parseCreditAmount(credits, "credits"),
      json: flag(values, "json"),
    };
  },
  services: (input): ServiceName[] => (input.credits ? ["tokens", "sessions"] : ["tokens"]),
  async run(input, { clients, out }) {
    const created = await clients.tokens.createSpace({
      name: input.name,
      ...(input.tier !== undefined ? { tier: input.tier } : {}),
      ...(input.maxSessionDuration !== undefined ? { maxSessionDuration: input.maxSessionDuration } : {}),
    });
    const spaceId = created.space?.id ?? "";
    // The key exists only in this answer: print it before anything else can fail.
    if (input.json) {
      out.json({ space_id: spaceId, api_key: created.apiKeySecret });
    } else {
      out.fields([
        ["space id", spaceId],
        ["api key", created.apiKeySecret],
      ]);
      out.note(KEY_SHOWN_ONCE);
    }
    if (!input.credits) return;
    const idempotencyKey = initialGrantKey(spaceId);
    try {
      const granted = await clients.sessions.grantCredits({
        spaceId,
        amount: input.credits,
        note: "initial credits (space create)",
        idempotencyKey,
      });
      if (!input.json) out.line(`credits left: ${granted.creditsLeft}`);
    } catch (err) {
      throw new FailedWithHint(
        err,
        `the space exists but its credits were not granted; run: avatarctl credits grant --space ${spaceId} ` +
          `--amount ${input.credits} --idempotency-key ${idempotencyKey}`,
      );
    }
  },
});

const list = defineCommand({
  group: "space",
  name: "list",
  summary: "List every space",
  ...jsonOnly,
  services: (): ServiceName[] => ["tokens"],
  async run(input, { clients, out }) {
    const spaces = (await clients.tokens.listSpaces({})).spaces.map(spaceView);
    if (input.json) return out.json(spaces);
    out.table(
      ["id", "name", "tier", "max_session_duration", "created_at"],
      spaces.map((s) => [s.id, s.name, s.tier, s.max_session_duration, s.created_at]),
    );
  },
});

const get = defineCommand({
  group: "space",
  name: "get",
  summary: "Show one space",
  options: {
    space: { type: "string", value: "ID", required: true, description: "space id" },
    ...jsonOption,
  },
  parse: (values) => ({ spaceId: uuidOption(values, "space"), json: flag(values, "json") }),
  services: (): ServiceName[] => ["tokens"],
  async run(input, ctx) {
    const { space } = await ctx.clients.tokens.getSpace({ spaceId: input.spaceId });
    printSpace(ctx, spaceView(space), input.json);
  },
});

const update = defineCommand({
  group: "space",
  name: "update",
  summary: "Change a space's tier, session-duration limit or name",
  options: {
    space: { type: "string", value: "ID", required: true, description: "space id" },
    tier: { type: "string", value: "TIER", description: tierNames.join("|") },
    "max-session-duration": {
      type: "string",
      value: "SECONDS",
      description: "session-duration limit; 0 goes back to the tier's limit",
    },
    name: { type: "string", value: "NAME", description: "new name" },
    ...jsonOption,
  },
  parse(values) {
    const tier = stringOption(values, "tier");
    const seconds = stringOption(values, "max-session-duration");
    const changes: { tier?: Tier; maxSessionDuration?: number; name?: string } = {};
    if (tier !== undefined) changes.tier = parseTier(tier);
    if (seconds !== undefined)
      changes.maxSessionDuration = parseSeconds(seconds, "max-session-duration", true);
    if (stringOption(values, "name") !== undefined) changes.name = requiredString(values, "name");
    if (Object.keys(changes).length === 0) {
      throw new UsageError("nothing to update: pass --tier, --max-session-duration or --name");
    }
    return { spaceId: uuidOption(values, "space"), changes, json: flag(values, "json") };
  },
  services: (): ServiceName[] => ["tokens"],
  async run(input, ctx) {
    const { space } = await ctx.clients.tokens.updateSpace({ spaceId: input.spaceId, ...input.changes });
    printSpace(ctx, spaceView(space), input.json);
  },
});

function printSpace({ out }: CommandContext, space: ReturnType<typeof spaceView>, json: boolean): void {
  if (json) {
    out.json(space);
    return;
  }
  out.fields([
    ["id", space.id],
    ["name", space.name],
    ["tier", space.tier],
    ["max session duration", `${space.max_session_duration} s`],
    ["created at", space.created_at],
  ]);
}

export const spaceCommands: Command[] = [create, list, get, update];
