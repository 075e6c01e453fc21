import type { ServiceName } from "@avatar/runtime";
import { flag, requiredString, stringOption, uuidOption } from "../args.js";
import { type Command, defineCommand, jsonOption } from "../command.js";
import { apiKeyView } from "../views.js";

const create = defineCommand({
  group: "key",
  name: "create",
  summary: "Create an API key for a space (printed once)",
  options: {
    space: { type: "string", value: "ID", required: true, description: "space id" },
    name: { type: "string", value: "NAME", description: 'label shown in listings (default: "key")' },
    ...jsonOption,
  },
  details: ['With --json, stdout is {"api_key_id": ..., "api_key": ...}.'],
  parse: (values) => ({
    spaceId: uuidOption(values, "space"),
    name: stringOption(values, "name") === undefined ? "" : requiredString(values, "name"),
    json: flag(values, "json"),
  }),
  services: (): ServiceName[] => ["tokens"],
  async run(input, { clients, out }) {
    const created = await clients.tokens.createApiKey({ spaceId: input.spaceId, name: input.name });
    const key = apiKeyView(created.apiKey);
    if (input.json) return out.json({ api_key_id: key.id, api_key: created.apiKeySecret });
    out.fields([
      ["api key id", key.id],
      ["api key", created.apiKeySecret],
    ]);
    out.note("The API key is shown only this once: store it now.");
  },
});

const list = defineCommand({
  group: "key",
  name: "list",
  summary: "List a space's API keys (never the keys themselves)",
  options: {
    space: { type: "string", value: "ID", required: true, description: "space id" },
    ...jsonOption,
  },
  parse: (values) => ({ spaceId: uuidOption(values, "space"), json: flag(values, "json") }),
  services: (): ServiceName[] => ["tokens"],
  async run(input, { clients, out }) {
    const keys = (await clients.tokens.listApiKeys({ spaceId: input.spaceId })).apiKeys.map(apiKeyView);
    if (input.json) return out.json(keys);
    out.table(
      ["id", "name", "prefix", "created_at", "revoked_at"],
      keys.map((k) => [k.id, k.name, k.prefix, k.created_at, k.revoked_at]),
    );
  },
});

const revoke = defineCommand({
  group: "key",
  name: "revoke",
  summary:
    "Revoke an API key: every gateway that hears the revocation (over NATS) refuses it within about a " +
    "second, one that misses it within API_KEY_CACHE_TTL_MS (10 s); session tokens it minted can no " +
    "longer start sessions, sessions already started run on",
  options: {
    key: { type: "string", value: "KEY_ID", required: true, description: "id of the key (see key list)" },
    ...jsonOption,
  },
  parse: (values) => ({ keyId: uuidOption(values, "key"), json: flag(values, "json") }),
  services: (): ServiceName[] => ["tokens"],
  async run(input, { clients, out }) {
    const key = apiKeyView((await clients.tokens.revokeApiKey({ apiKeyId: input.keyId })).apiKey);
    if (input.json) return out.json(key);
    out.line(`revoked API key ${key.id} (${key.prefix}…) of space ${key.space_id} at ${key.revoked_at}`);
    out.line(
      "gateways refuse it within about a second (at most API_KEY_CACHE_TTL_MS if one missed the news)",
    );
  },
});

export const keyCommands: Command[] = [create, list, revoke];
