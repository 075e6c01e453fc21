/** Helpers of the sessions suite tests: minting through the public endpoint, credits, a second space. */
import { readCatalogFile } from "@avatar/catalog";
import { Tier } from "@avatar/contracts/tokens";
import { expect } from "vitest";
import { json, type TestSuite } from "./support.js";

const demo = readCatalogFile().demo_space_avatars;
const byName = (name: string) => {
  const a = demo.find((x) => x.name.startsWith(name));
  if (!a) throw new Error(`no demo avatar ${name}`);
  return a.id;
};
/** Sandbox-enabled. */
export const ADA = byName("Ada");
export const CHLOE = byName("Chlo");

export const key = (apiKey: string) => ({ "X-API-KEY": apiKey });
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
export const cookie = (token: string) => ({ Cookie: `la_session=${token}` });

export interface Minted {
  session_id: string;
  session_token: string;
}

/** POST /v1/sessions/token with the given key (a FULL session on Ada by default). */
export async function mint(
  suite: TestSuite,
  body: Record<string, unknown> = {},
  apiKey = suite.apiKey,
): Promise<Minted> {
  const res = await suite.request("POST", "/v1/sessions/token", {
    headers: key(apiKey),
    body: { avatar_id: ADA, ...body },
  });
  const payload = await json(res);
  expect(res.status, JSON.stringify(payload)).toBe(200);
  return payload.data as Minted;
}

/** Credits for a space (support.ts has it: processes a test starts, without vitest, use it too). */
export { grant } from "./support.js";

/** A public avatar of the catalog: every space may run sessions on it. */
export const WAYNE = (() => {
  const a = readCatalogFile().public_avatars.find((x) => x.name === "Wayne");
  if (!a) throw new Error("no public avatar Wayne");
  return a.id;
})();

/** Another space with its own key, for isolation tests. */
export async function otherSpace(suite: TestSuite): Promise<{ spaceId: string; apiKey: string }> {
  const created = await suite.clients.tokens.createSpace({
    name: `other ${crypto.randomUUID()}`,
    tier: Tier.PRO,
  });
  return { spaceId: created.space?.id ?? "", apiKey: created.apiKeySecret };
}

/** The session as GET /v1/sessions/{id} shows it to the demo key. */
export async function sessionEntry(suite: TestSuite, id: string) {
  const res = await suite.get(`/v1/sessions/${id}`, key(suite.apiKey));
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

export { eventually } from "@avatar/testkit";
