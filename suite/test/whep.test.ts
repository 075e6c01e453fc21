import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start, startedLite, stopSession } from "./realtime-support.js";
import { bearer, cookie, grant, key, mint, otherSpace } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * WHEP through the gateway (contract section 7): credentials, the session's state and the body are
 * checked before anything reaches the session's worker, and every refusal has the contract's answer.
 */

let suite: TestSuite;
beforeAll(async () => {
  suite = await startTestSuite();
  await grant(suite, "100");
});
afterAll(async () => {
  await suite?.stop();
});

/** A recvonly offer as a browser writes it (its content does not matter before the worker). */
const OFFER = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n";
const sdp = { "Content-Type": "application/sdp" };

function whep(sessionId: string, headers: Record<string, string>, body: string | undefined = OFFER) {
  return fetch(`${suite.gatewayUrl}/v1/sessions/${sessionId}/whep`, {
    method: "POST",
    headers: { ...sdp, ...headers },
    ...(body !== undefined ? { body } : {}),
  });
}

async function refused(res: Response, status: number): Promise<string> {
  const body = await json(res);
  expect({ status: res.status, code: body.code, data: body.data }).toEqual({
    status,
    code: status * 10,
    data: null,
  });
  return body.message;
}

describe("POST /v1/sessions/{id}/whep", () => {
  it("needs a credential of the session's space or the session itself", async () => {
    const s = await startedLite(suite);
    await refused(await whep(s.session_id, {}), 401);
    await refused(await whep(s.session_id, bearer("not-a-token")), 401);
    const other = await otherSpace(suite);
    await refused(await whep(s.session_id, key(other.apiKey)), 404);
    const another = await startedLite(suite);
    await refused(await whep(s.session_id, bearer(another.session_token)), 404);
    await stopSession(suite, s.session_token);
    await stopSession(suite, another.session_token);
  });

  it("refuses a body that is not an SDP offer: 415 for another type, 400 for an empty or foreign body", async () => {
    const s = await startedLite(suite);
    const asJson = await fetch(`${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep`, {
      method: "POST",
      headers: { ...bearer(s.session_token), "Content-Type": "application/json" },
      body: JSON.stringify({ sdp: OFFER }),
    });
    expect(asJson.headers.get("accept")).toBe("application/sdp");
    await refused(asJson, 415);
    await refused(await whep(s.session_id, bearer(s.session_token), ""), 400);
    await refused(await whep(s.session_id, bearer(s.session_token), "hello"), 400);
    await stopSession(suite, s.session_token);
  });

  it("answers 409 before the session starts and after it ended", async () => {
    const minted = await mint(suite, { mode: "LITE" });
    expect(await refused(await whep(minted.session_id, bearer(minted.session_token)), 409)).toBe(
      "The session has not started",
    );
    await start(suite, minted.session_token);
    await stopSession(suite, minted.session_token);
    expect(await refused(await whep(minted.session_id, key(suite.apiKey)), 409)).toBe(
      "The session has ended",
    );
  });

  it("takes the session's cookie, as the browser that started it has", async () => {
    const s = await startedLite(suite);
    // Without media on this suite's worker, the credential and state checks pass and the worker says so.
    const res = await whep(s.session_id, cookie(s.session_token));
    expect(res.status).not.toBe(401);
    expect(res.status).not.toBe(404);
    await stopSession(suite, s.session_token);
  });

  it("lets browsers of any origin read the Location of a viewer", async () => {
    const s = await startedLite(suite);
    const preflight = await fetch(`${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://customer.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://customer.example");
    const post = await fetch(`${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep`, {
      method: "POST",
      headers: { ...sdp, ...bearer(s.session_token), Origin: "https://customer.example" },
      body: OFFER,
    });
    expect(post.headers.get("access-control-expose-headers")).toContain("Location");
    await stopSession(suite, s.session_token);
  });
});

describe("DELETE /v1/sessions/{id}/whep/{viewer}", () => {
  it("answers 204 for a viewer of an ended session (it ended with the session), 405 for PATCH", async () => {
    const s = await startedLite(suite);
    await stopSession(suite, s.session_token);
    const res = await fetch(`${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep/some-viewer`, {
      method: "DELETE",
      headers: bearer(s.session_token),
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    const patch = await fetch(`${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep/some-viewer`, {
      method: "PATCH",
      headers: { ...bearer(s.session_token), "Content-Type": "application/trickle-ice-sdpfrag" },
      body: "a=candidate",
    });
    await refused(patch, 405);
  });
});
