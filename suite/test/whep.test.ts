import { WhepViewer, whepOverHttp } from "@avatar/media";
import { rendererFrameTime } from "@avatar/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventClient, pcmBase64 } from "./realtime-client.js";
import { start, startedLite, stopSession } from "./realtime-support.js";
import { bearer, cookie, eventually, grant, key, mint, otherSpace } from "./sessions-support.js";
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

/** A recvonly offer of a real WebRTC stack (libdatachannel), without sending it anywhere. */
async function offerOf(): Promise<string> {
  let offer = "";
  await WhepViewer.connect(async (sdpOffer) => {
    offer = sdpOffer;
    throw new Error("only the offer was wanted");
  }).catch(() => {});
  return offer;
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

  it("watches a LITE session: the avatar's video and voice reach a viewer, and its voice is the caller's", async () => {
    const s = await startedLite(suite);
    const client = await EventClient.connect(s.ws_url);
    await client.next("session.state_updated");
    const url = `${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep`;
    // Opus packets of silence are a few bytes; of a voice, tens of bytes.
    const voiced: number[] = [];
    const viewer = await WhepViewer.connect(whepOverHttp(url, bearer(s.session_token)), {
      codecs: ["H264"],
      onAudioPacket: (p) => {
        if (p.data.length > 20) voiced.push(p.receivedAt);
      },
    });
    await viewer.connected;
    await eventually(async () => expect(viewer.stats.keyframes).toBeGreaterThan(0), 15_000);
    expect(voiced).toEqual([]);
    client.send({ type: "agent.speak", event_id: "u1", audio: pcmBase64(600) });
    client.send({ type: "agent.speak_end", event_id: "u1" });
    await client.next("agent.speak_ended");
    await eventually(async () => expect(voiced.length).toBeGreaterThanOrEqual(10), 15_000);
    expect(viewer.stats.videoFrames).toBeGreaterThan(10);
    // The renderer's time per frame reaches the process's metrics (its /metrics).
    const frameCounts = (await rendererFrameTime.get()).values.filter(
      (v) => v.metricName === "avatar_renderer_frame_seconds_count",
    );
    expect(frameCounts.reduce((n, v) => n + v.value, 0)).toBeGreaterThan(10);
    await viewer.close();
    await client.close();
    await stopSession(suite, s.session_token);
  });

  it("takes the session's cookie, as the browser that started it has, and API keys of its space", async () => {
    const s = await startedLite(suite);
    for (const headers of [cookie(s.session_token), key(suite.apiKey)]) {
      const viewer = await WhepViewer.connect(
        whepOverHttp(`${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep`, headers),
        { codecs: ["H264"] },
      );
      await viewer.close();
    }
    await stopSession(suite, s.session_token);
  });

  it("lets four viewers watch and refuses the fifth with 429; DELETE ends one (204), twice is 404", async () => {
    const s = await startedLite(suite);
    const url = `${suite.gatewayUrl}/v1/sessions/${s.session_id}/whep`;
    const viewers: WhepViewer[] = [];
    for (let i = 0; i < 4; i++) {
      viewers.push(await WhepViewer.connect(whepOverHttp(url, bearer(s.session_token))));
    }
    await refused(await whep(s.session_id, bearer(s.session_token), await offerOf()), 429);
    // A viewer's resource: DELETE ends it, and its seat is free again.
    for (const v of viewers) await v.close();
    await eventually(async () => {
      const again = await fetch(url, {
        method: "POST",
        headers: { ...sdp, ...bearer(s.session_token) },
        body: await offerOf(),
      });
      expect(again.status).toBe(201);
      const location = again.headers.get("location") ?? "";
      expect(location).toMatch(new RegExp(`^/v1/sessions/${s.session_id}/whep/[0-9a-f-]{36}$`));
      const del = await fetch(`${suite.gatewayUrl}${location}`, {
        method: "DELETE",
        headers: bearer(s.session_token),
      });
      expect(del.status).toBe(204);
      await refused(
        await fetch(`${suite.gatewayUrl}${location}`, { method: "DELETE", headers: bearer(s.session_token) }),
        404,
      );
    });
    await stopSession(suite, s.session_token);
  });

  it("refuses an offer it cannot answer with 400: an answer, no video, no codec it sends", async () => {
    const s = await startedLite(suite);
    const good = await offerOf();
    for (const bad of [
      good.replace("a=recvonly", "a=sendonly").replace(/a=setup:actpass/g, "a=setup:active"),
      good.replace(/m=video[\s\S]*?(?=m=audio)/, ""),
      good.replace(/H264\/90000/g, "AV1/90000").replace(/VP8\/90000/g, "VP9/90000"),
    ]) {
      const res = await whep(s.session_id, bearer(s.session_token), bad);
      expect(res.status, bad.slice(0, 60)).toBe(400);
    }
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
