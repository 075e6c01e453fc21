import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EventClient } from "./realtime-client.js";
import { start, stopSession } from "./realtime-support.js";
import { ADA, bearer, CHLOE, grant, key, sessionEntry } from "./sessions-support.js";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";

/** An embed's page and the sessions its visitors run, without any credential, over real HTTP. */

let suite: TestSuite;
beforeAll(async () => {
  suite = await startTestSuite();
  await grant(suite, "100");
});
afterAll(async () => {
  await suite?.stop();
});
// The visitors' endpoint is limited per client IP (10/s), and every test here comes from one address.
beforeEach(atNextSecond);

async function embed(body: Record<string, unknown>): Promise<{ embed_id: string; url: string }> {
  const res = await suite.request("POST", "/v2/embeddings", { headers: key(suite.apiKey), body });
  const payload = await json(res);
  expect(res.status, JSON.stringify(payload)).toBe(200);
  return payload.data;
}

describe("the embed page", () => {
  it("serves the page its url points at, as self-contained HTML under a strict policy", async () => {
    const { embed_id, url } = await embed({ avatar_id: ADA, orientation: "vertical" });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain(`{"embedId":"${embed_id}"}`);
    expect(html).toContain("--ratio: 9 / 16");
    expect(html).toContain('<main class="app vertical">');
    expect(html).not.toMatch(/<script[^>]+src=/);
  });

  it("mints a visitor's session from the embed's recipe: source EMBED, its embed_id, in the owner's space", async () => {
    const { embed_id } = await embed({ avatar_id: ADA, is_sandbox: true, max_session_duration: 120 });
    const res = await suite.request("POST", `/embed/${embed_id}/session`);
    const minted = (await json(res)).data;
    expect(res.status).toBe(200);
    expect(minted).toEqual({ session_id: expect.any(String), session_token: expect.any(String) });

    const { ws_url } = await start(suite, minted.session_token);
    const client = await EventClient.connect(ws_url);
    await client.next("session.state_updated", (e) => e.state === "connected");
    expect(await sessionEntry(suite, minted.session_id)).toMatchObject({ source: "EMBED", is_sandbox: true });
    const listed = await suite.get(`/v1/sessions?embed_id=${embed_id}`, key(suite.apiKey));
    expect((await json(listed)).data.results.map((x: { id: string }) => x.id)).toEqual([minted.session_id]);
    await stopSession(suite, minted.session_token);
    await client.next("session.stopped");
  });

  it("streams its sessions with the embed's video settings and orientation", async () => {
    const created = await suite.request("POST", "/v2/embeddings", {
      headers: key(suite.apiKey),
      body: {
        avatar_id: ADA,
        is_sandbox: true,
        orientation: "vertical",
        video_settings: { encoding: "VP8", quality: "low" },
      },
    });
    const data = (await json(created)).data;
    expect(data).toMatchObject({
      orientation: "vertical",
      video_settings: { quality: "low", encoding: "VP8" },
    });
    const minted = (await json(await suite.request("POST", `/embed/${data.embed_id}/session`))).data;
    const claims = JSON.parse(Buffer.from(minted.session_token.split(".")[1], "base64url").toString("utf8"));
    expect(claims.start_session_data.video_settings).toEqual({ quality: "low", encoding: "VP8" });
    const { config } = await suite.clients.sessions.getSessionConfig({ sessionId: minted.session_id });
    // The worker renders 360x640 VP8 for it: low quality, turned.
    expect(config?.videoSettings).toMatchObject({ quality: 4, encoding: 1, orientation: 2 });

    const plain = (
      await json(
        await suite.request("POST", "/v2/embeddings", {
          headers: key(suite.apiKey),
          body: { avatar_id: ADA },
        }),
      )
    ).data;
    expect(plain.video_settings).toEqual({ quality: "high", encoding: "H264" });
  });

  it("refuses video settings the avatar cannot stream (400) and values that do not exist (422)", async () => {
    const hd = await suite.request("POST", "/v2/embeddings", {
      headers: key(suite.apiKey),
      body: { avatar_id: ADA, video_settings: { quality: "very_high" } },
    });
    expect(hd.status).toBe(400);
    expect((await json(hd)).message).toContain("1080p");
    const bad = await suite.request("POST", "/v2/embeddings", {
      headers: key(suite.apiKey),
      body: { avatar_id: ADA, video_settings: { encoding: "AV1" } },
    });
    expect(bad.status).toBe(422);
    expect((await json(bad)).detail[0]).toMatchObject({
      loc: ["body", "video_settings", "encoding"],
      type: "enum",
    });
  });

  it("refuses what the token endpoint refuses: the embed's avatar deactivated since is a 400", async () => {
    const { embed_id } = await embed({ avatar_id: CHLOE });
    const patch = (is_deactivated: boolean) =>
      suite.request("PATCH", `/v1/avatars/${CHLOE}`, {
        headers: key(suite.apiKey),
        body: { is_deactivated },
      });
    expect((await patch(true)).status).toBe(200);
    try {
      const res = await suite.request("POST", `/embed/${embed_id}/session`);
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe(4000);
    } finally {
      expect((await patch(false)).status).toBe(200);
    }
    expect((await suite.request("POST", `/embed/${embed_id}/session`)).status).toBe(200);
  });

  it("takes the visitor's language over the embed's default, and refuses a bad one as the token endpoint does", async () => {
    const { embed_id } = await embed({ avatar_id: ADA, is_sandbox: true, default_language: "en" });
    const languageOf = (token: string) => {
      const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
      return JSON.stringify(claims).match(/"language":"([^"]+)"/)?.[1];
    };
    const mintWith = (body?: unknown) =>
      suite.request("POST", `/embed/${embed_id}/session`, body === undefined ? {} : { body });
    const fallback = await mintWith();
    expect(languageOf((await json(fallback)).data.session_token)).toBe("en");
    const chosen = await mintWith({ language: "ja" });
    expect(chosen.status).toBe(200);
    expect(languageOf((await json(chosen)).data.session_token)).toBe("ja");

    const unknown = await mintWith({ language: "xx-nope" });
    expect(unknown.status).toBe(400);
    const wrongType = await mintWith({ language: 5 });
    expect(wrongType.status).toBe(422);
    expect((await json(wrongType)).detail[0]).toMatchObject({
      loc: ["body", "language"],
      type: "string_type",
    });
    const notJson = await mintWith("not json");
    expect(notJson.status).toBe(422);
    expect((await json(notJson)).detail[0].type).toBe("json_invalid");
  });

  it("answers 404 for an unknown embed and 422 for an id that is not a UUID, on both", async () => {
    const unknown = crypto.randomUUID();
    for (const [method, path] of [
      ["GET", `/embed/${unknown}`],
      ["POST", `/embed/${unknown}/session`],
    ] as const) {
      const res = await suite.request(method, path);
      expect(res.status, path).toBe(404);
      expect((await json(res)).code).toBe(4040);
    }
    for (const [method, path] of [
      ["GET", "/embed/not-a-uuid"],
      ["POST", "/embed/not-a-uuid/session"],
    ] as const) {
      const res = await suite.request(method, path);
      expect(res.status, path).toBe(422);
      expect((await json(res)).detail[0]).toMatchObject({ loc: ["path", "embed_id"], type: "uuid_parsing" });
    }
  });

  it("gives a visitor a session token, which cannot mint tokens (403)", async () => {
    const { embed_id } = await embed({ avatar_id: ADA, is_sandbox: true });
    const mintRes = await suite.request("POST", `/embed/${embed_id}/session`);
    expect(mintRes.status).toBe(200);
    const minted = (await json(mintRes)).data;
    const res = await suite.request("POST", "/v1/sessions/token", {
      headers: bearer(minted.session_token),
      body: { avatar_id: ADA },
    });
    expect(res.status).toBe(403);
  });
});
