/** Shared by the token endpoint's suite tests: keys that stay under the rate limit, posting, counting. */
import { readCatalogFile } from "@avatar/catalog";
import { expect } from "vitest";
import { json, type TestSuite } from "./support.js";

export const TOKEN_PATH = "/v1/sessions/token";

const catalog = readCatalogFile();
const demo = (name: string) => {
  const a = catalog.demo_space_avatars.find((x) => x.name.startsWith(name));
  if (!a) throw new Error(`demo avatar ${name} missing from the catalog file`);
  return a;
};
/** Demo-space avatars: Ada is sandbox-enabled, Ben is 1080p, Chloé neither. */
export const ADA = demo("Ada");
export const BEN = demo("Ben");
export const CHLOE = demo("Chlo");
/** A public avatar of the catalog that is not sandbox-enabled. */
export const PUBLIC_AVATAR = catalog.public_avatars.find((a) => !a.sandbox_enabled && !a.is_1080p) ?? ADA;
export const VOICES = catalog.voices;

/**
 * API keys of the demo space, a fresh one every `perKey` requests: the endpoint allows 10 requests per
 * second per key, so a test that sends many requests never meets the limit (two keys of one space have
 * independent budgets).
 */
export class KeyRing {
  private current: string | undefined;
  private used = 0;

  constructor(
    private readonly suite: TestSuite,
    private readonly perKey = 9,
  ) {}

  async next(): Promise<string> {
    if (!this.current || this.used >= this.perKey) {
      const created = await this.suite.clients.tokens.createApiKey({
        spaceId: this.suite.spaceId,
        name: "ring",
      });
      this.current = created.apiKeySecret;
      this.used = 0;
    }
    this.used++;
    return this.current;
  }
}

/** POSTs a body (an object is sent as JSON, a string as it is) with a key from the ring. */
export async function postToken(suite: TestSuite, keys: KeyRing, body: unknown): Promise<Response> {
  return suite.request("POST", TOKEN_PATH, { headers: { "X-API-KEY": await keys.next() }, body });
}

/** Sessions of the demo space, counted through the sessions service. */
export async function sessionCount(suite: TestSuite): Promise<number> {
  const res = await suite.clients.sessions.listSessions({
    spaceId: suite.spaceId,
    page: { page: 1, pageSize: 1 },
  });
  return res.page?.count ?? res.sessions.length;
}

export interface Entry {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** The 422 body: `{"detail": [...]}` and nothing else, each entry with loc, msg and type. */
export async function expect422(res: Response): Promise<Entry[]> {
  expect(res.status).toBe(422);
  const body = await json(res);
  expect(Object.keys(body)).toEqual(["detail"]);
  expect(Array.isArray(body.detail)).toBe(true);
  for (const entry of body.detail as Entry[]) expectEntryShape(entry);
  return body.detail;
}

export function expectEntryShape(entry: Entry): void {
  expect(Object.keys(entry).every((k) => ["type", "loc", "msg", "input", "ctx"].includes(k))).toBe(true);
  expect(typeof entry.type).toBe("string");
  expect(typeof entry.msg).toBe("string");
  expect(Array.isArray(entry.loc)).toBe(true);
  expect(entry.loc[0]).toBe("body");
  expect(entry.loc.every((p) => typeof p === "string" || typeof p === "number")).toBe(true);
  if (entry.ctx !== undefined) expect(typeof entry.ctx).toBe("object");
}

/** The error envelope of a 4xx other than 422, with its status. */
export async function expectError(res: Response, status: number): Promise<string> {
  expect(res.status).toBe(status);
  const body = await json(res);
  expect(body).toMatchObject({ code: status * 10, data: null });
  return body.message as string;
}

/** The claims of a session token (decoded, not verified). */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
export function claimsOf(token: string): any {
  const [, payload] = token.split(".");
  return JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8"));
}
