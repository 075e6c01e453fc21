import { randomUUID } from "node:crypto";
import { type CatalogDatabase, catalogService, readCatalogFile } from "@avatar/catalog";
import { AvatarStatus, CatalogService } from "@avatar/contracts/catalog";
import { SessionEndReason } from "@avatar/contracts/sessions";
import { createDb, createLogger } from "@avatar/runtime";
import { collectingLogger, withTableAway } from "@avatar/testkit";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";

/** PATCH and DELETE /v1/avatars/{avatar_id} over HTTP, and what a delete asks of the sessions service. */

let suite: TestSuite;
const catalog = readCatalogFile();
const publicVoice = catalog.voices[0];

beforeAll(async () => {
  suite = await startTestSuite();
});
afterAll(async () => {
  await suite?.stop();
});

async function call(method: string, path: string, body?: unknown) {
  for (;;) {
    const res = await suite.request(method, path, {
      headers: { "X-API-KEY": suite.apiKey },
      ...(body !== undefined ? { body } : {}),
    });
    if (res.status === 429) {
      await atNextSecond();
      continue;
    }
    return { status: res.status, body: await json(res) };
  }
}

/** A fresh avatar of the demo space, so tests do not share state. */
async function newAvatar(name = "Fresh"): Promise<string> {
  const id = randomUUID();
  await suite.clients.catalog.importAvatars({
    avatars: [
      {
        id,
        spaceId: suite.spaceId,
        name,
        status: AvatarStatus.ACTIVE,
        defaultVoice: { id: publicVoice?.id },
      },
    ],
  });
  return id;
}

describe("PATCH /v1/avatars/{avatar_id}", () => {
  it("renames, sets the default voice, deactivates and reactivates", async () => {
    const id = await newAvatar();
    const before = (await call("GET", `/v1/avatars/${id}`)).body.data;
    const renamed = await call("PATCH", `/v1/avatars/${id}`, { name: "x".repeat(64) });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ code: 100, data: { id, name: "x".repeat(64), status: "ACTIVE" } });
    expect(renamed.body.data.default_voice).toEqual(before.default_voice);
    expect(Date.parse(renamed.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));

    const voice = catalog.voices[1];
    const revoiced = await call("PATCH", `/v1/avatars/${id}`, { default_voice_id: voice?.id });
    expect(revoiced.body.data.default_voice).toEqual({ id: voice?.id, name: voice?.name });

    const off = await call("PATCH", `/v1/avatars/${id}`, { is_deactivated: true });
    expect(off.body.data.status).toBe("DEACTIVATED");
    expect((await call("GET", "/v1/avatars?page_size=100")).body.data.results).toContainEqual(
      expect.objectContaining({ id, status: "DEACTIVATED" }),
    );
    const on = await call("PATCH", `/v1/avatars/${id}`, { is_deactivated: false });
    expect(on.body.data.status).toBe("ACTIVE");
  });

  it("takes a private voice of the space", async () => {
    const id = await newAvatar();
    const voiceId = randomUUID();
    await suite.clients.catalog.importVoices({
      voices: [{ id: voiceId, spaceId: suite.spaceId, name: "Mine" }],
    });
    const res = await call("PATCH", `/v1/avatars/${id}`, { default_voice_id: voiceId });
    expect(res.body.data.default_voice).toEqual({ id: voiceId, name: "Mine" });
  });

  it("keeps is_expired read-only and ignores unknown keys; an empty body changes nothing", async () => {
    const id = await newAvatar("Same");
    const before = (await call("GET", `/v1/avatars/${id}`)).body.data;
    const res = await call("PATCH", `/v1/avatars/${id}`, {
      is_expired: true,
      status: "DELETED",
      colour: "red",
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(before);
    expect((await call("PATCH", `/v1/avatars/${id}`, {})).body.data).toEqual(before);
    expect((await call("PATCH", `/v1/avatars/${id}`, { name: null })).body.data).toEqual(before);
  });

  it("422 for a name over 64 characters, an empty name, a voice id that is not a UUID and a missing body", async () => {
    const id = await newAvatar();
    const res = await call("PATCH", `/v1/avatars/${id}`, {
      name: "n".repeat(65),
      default_voice_id: "voice-1",
      is_deactivated: "maybe",
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        type: "string_too_long",
        loc: ["body", "name"],
        msg: "String should have at most 64 characters",
        input: "n".repeat(65),
        ctx: { max_length: 64 },
      },
      expect.objectContaining({ type: "uuid_parsing", loc: ["body", "default_voice_id"] }),
      expect.objectContaining({ type: "bool_parsing", loc: ["body", "is_deactivated"] }),
    ]);
    const empty = await call("PATCH", `/v1/avatars/${id}`, { name: "" });
    expect(empty.body.detail[0]).toMatchObject({ type: "string_too_short", loc: ["body", "name"] });
    const noBody = await call("PATCH", `/v1/avatars/${id}`);
    expect(noBody.body.detail[0]).toMatchObject({ type: "missing", loc: ["body"] });
    const badPath = await call("PATCH", "/v1/avatars/avatar-1", { name: "a" });
    expect(badPath.body.detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["path", "avatar_id"] });
  });

  it("404 for an unknown avatar and an unknown voice", async () => {
    const id = await newAvatar();
    const missing = "00000000-0000-4000-8000-000000000000";
    expect((await call("PATCH", `/v1/avatars/${missing}`, { name: "a" })).status).toBe(404);
    const voice = await call("PATCH", `/v1/avatars/${id}`, { default_voice_id: missing });
    expect(voice).toMatchObject({ status: 404, body: { code: 4040, data: null } });
    expect(voice.body.message).toContain("default_voice_id");
  });
});

describe("DELETE /v1/avatars/{avatar_id}", () => {
  it("marks the avatar DELETED; a second delete and any change are 404", async () => {
    const id = await newAvatar();
    const res = await call("DELETE", `/v1/avatars/${id}`);
    expect(res).toMatchObject({ status: 200, body: { code: 100, data: null } });
    expect((await call("GET", `/v1/avatars/${id}`)).body.data.status).toBe("DELETED");
    const list = (await call("GET", "/v1/avatars?page_size=100")).body.data.results;
    expect(list.map((x: { id: string }) => x.id)).not.toContain(id);
    expect((await call("DELETE", `/v1/avatars/${id}`)).status).toBe(404);
    expect((await call("PATCH", `/v1/avatars/${id}`, { is_deactivated: false })).status).toBe(404);
    expect((await call("GET", `/v1/avatars/${id}`)).body.data.status).toBe("DELETED");
  });
});

describe("ending the sessions of a deleted avatar", () => {
  async function withCatalog(
    endAvatarSessions: (req: {
      avatarId: string;
      reason: SessionEndReason;
    }) => Promise<{ sessionIds: string[] }>,
    run: (client: ReturnType<typeof createClient<typeof CatalogService>>, lines: string[]) => Promise<void>,
  ) {
    const db = createDb<CatalogDatabase>({ url: suite.databaseUrl, schema: "catalog", poolSize: 1 });
    const lines: string[] = [];
    const log = createLogger({ sink: (line) => lines.push(line) });
    const impl = catalogService(db, { endAvatarSessions, log });
    const client = createClient(
      CatalogService,
      createRouterTransport((r) => r.service(CatalogService, impl)),
    );
    try {
      await run(client, lines);
    } finally {
      await db.destroy();
    }
  }

  it("asks the sessions service once, with AVATAR_DELETED", async () => {
    const calls: { avatarId: string; reason: SessionEndReason }[] = [];
    await withCatalog(
      async (req) => {
        calls.push({ avatarId: req.avatarId, reason: req.reason });
        return { sessionIds: [randomUUID()] };
      },
      async (client) => {
        const id = await newAvatar();
        const { avatar } = await client.deleteAvatar({ spaceId: suite.spaceId, avatarId: id });
        expect(avatar?.status).toBe(AvatarStatus.DELETED);
        await expect(client.deleteAvatar({ spaceId: suite.spaceId, avatarId: id })).rejects.toMatchObject({
          code: Code.NotFound,
        });
        expect(calls).toEqual([{ avatarId: id, reason: SessionEndReason.AVATAR_DELETED }]);
      },
    );
  });

  it("asks on behalf of the delete: a failure in the sessions service is logged under its X-Request-Id", async () => {
    const { log, records } = collectingLogger();
    const own = await startTestSuite({ log });
    try {
      const id = randomUUID();
      await own.clients.catalog.importAvatars({
        avatars: [{ id, spaceId: own.spaceId, name: "Doomed", status: AvatarStatus.ACTIVE }],
      });
      await withTableAway({ url: own.databaseUrl, schema: "sessions" }, "sessions", async () => {
        const res = await own.request("DELETE", `/v1/avatars/${id}`, {
          headers: { "X-API-KEY": own.apiKey, "X-Request-Id": "req-avatar-delete-1" },
        });
        expect(res.status).toBe(200);
      });
      expect(records().find((r) => r.msg === "rpc failed unexpectedly")).toMatchObject({
        request_id: "req-avatar-delete-1",
        procedure: "/avatar.sessions.v1.SessionsService/EndAvatarSessions",
      });
      expect(records().find((r) => r.avatar_id === id)).toMatchObject({
        level: "warn",
        msg: "could not end the sessions of a deleted avatar",
        request_id: "req-avatar-delete-1",
      });
    } finally {
      await own.stop();
    }
  });

  it("still deletes when the sessions service cannot end them, and logs that", async () => {
    await withCatalog(
      async () => {
        throw new ConnectError("not implemented", Code.Unimplemented);
      },
      async (client, lines) => {
        const id = await newAvatar();
        const { avatar } = await client.deleteAvatar({ spaceId: suite.spaceId, avatarId: id });
        expect(avatar?.status).toBe(AvatarStatus.DELETED);
        const warning = lines.map((l) => JSON.parse(l)).find((l) => l.avatar_id === id);
        expect(warning).toMatchObject({
          level: "warn",
          msg: "could not end the sessions of a deleted avatar",
        });
      },
    );
  });
});
