import { expect } from "vitest";
import { bearer, CHLOE, type Minted, mint } from "./sessions-support.js";
import { json, type TestSuite } from "./support.js";

export interface StartedSession extends Minted {
  ws_url: string;
}

/** POST /v1/sessions/start; answers the start's data (with a fresh ws_url each time). */
export async function start(
  suite: TestSuite,
  token: string,
): Promise<{ session_id: string; ws_url: string }> {
  const res = await suite.request("POST", "/v1/sessions/start", { headers: bearer(token) });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.data;
}

/** A started LITE session (on Chloe unless told otherwise). */
export async function startedLite(
  suite: TestSuite,
  body: Record<string, unknown> = {},
  apiKey = suite.apiKey,
): Promise<StartedSession> {
  const minted = await mint(suite, { avatar_id: CHLOE, mode: "LITE", ...body }, apiKey);
  const started = await start(suite, minted.session_token);
  return { ...minted, ws_url: started.ws_url };
}

export async function stopSession(suite: TestSuite, token: string): Promise<void> {
  const res = await suite.request("POST", "/v1/sessions/stop", { headers: bearer(token) });
  expect(res.status).toBe(200);
}
