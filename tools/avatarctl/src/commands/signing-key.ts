import type { ServiceName } from "@avatar/runtime";
import { type Command, defineCommand, jsonOnly } from "../command.js";
import { signingKeyView } from "../views.js";

const list = defineCommand({
  group: "signing-key",
  name: "list",
  summary:
    "List the keys session tokens are verified with: the current one, which signs, and those retired " +
    "within the last 24 hours (never the private halves)",
  ...jsonOnly,
  services: (): ServiceName[] => ["tokens"],
  async run(input, { clients, out }) {
    const keys = (await clients.tokens.getSigningKeys({})).keys.map(signingKeyView);
    if (input.json) return out.json(keys);
    out.table(
      ["kid", "alg", "current", "created_at"],
      keys.map((k) => [k.kid, k.alg, k.current ? "yes" : "no", k.created_at]),
    );
  },
});

const rotate = defineCommand({
  group: "signing-key",
  name: "rotate",
  summary:
    "Make a new key (ES256) the one session tokens are signed with; tokens of the old key keep " +
    "verifying for 24 hours. A key made before ES256 (EdDSA) signs until this is run: run it once every " +
    "gateway accepts ES256 tokens (builds from 2026-11-27 on)",
  ...jsonOnly,
  services: (): ServiceName[] => ["tokens"],
  async run(input, { clients, out }) {
    const key = signingKeyView((await clients.tokens.rotateSigningKey({})).key);
    if (input.json) return out.json(key);
    out.line(`session tokens are now signed with key ${key.kid} (${key.alg})`);
    out.line("tokens signed with the previous key keep verifying for 24 hours");
  },
});

export const signingKeyCommands: Command[] = [list, rotate];
