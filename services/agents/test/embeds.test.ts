import { EmbedOrientation } from "@avatar/contracts/agents";
import { AvatarStatus } from "@avatar/contracts/catalog";
import { AgentType } from "@avatar/contracts/common";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type AgentsTestDb,
  clearAgents,
  type DirectService,
  directService,
  expectFailure,
  MISSING,
  openAgentsDb,
  SPACE_A,
  SPACE_B,
} from "./support.js";

let t: AgentsTestDb;
let s: DirectService;

beforeAll(async () => {
  t = await openAgentsDb();
  s = directService(t.db);
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await clearAgents(t.db);
});

const agent = (spaceId: string, isPublic: boolean) =>
  s.agents
    .createVoiceAgent({ spaceId, name: "a", agentType: AgentType.MANAGED_AGENT, isPublic })
    .then((r) => r.voiceAgent?.id ?? expect.fail("no agent"));

describe("embeds", () => {
  it("stores an embed with a voice and a context, and finds it by id alone", async () => {
    const avatar = s.catalog.addAvatar({ spaceId: SPACE_A });
    const voice = s.catalog.addVoice({ isPublic: true });
    const { context } = await s.agents.createContext({ spaceId: SPACE_A, name: "c", prompt: "p" });
    const { embed } = await s.agents.createEmbed({
      spaceId: SPACE_A,
      avatarId: avatar.id,
      voiceId: voice.id,
      contextId: context?.id,
      orientation: EmbedOrientation.VERTICAL,
      maxSessionDuration: 120,
      defaultLanguage: "ja",
    });
    expect(embed).toMatchObject({
      spaceId: SPACE_A,
      avatarId: avatar.id,
      voiceId: voice.id,
      contextId: context?.id,
      voiceAgentId: "",
      orientation: EmbedOrientation.VERTICAL,
      maxSessionDuration: 120,
      defaultLanguage: "ja",
      isSandbox: false,
    });
    const found = await s.agents.getEmbed({ embedId: embed?.id ?? "" });
    expect(found.embed?.id).toBe(embed?.id);
    await expectFailure(s.agents.getEmbed({ embedId: MISSING }), Code.NotFound, "embed_id");
  });

  it("is horizontal unless asked otherwise", async () => {
    const avatar = s.catalog.addAvatar({ isPublic: true });
    const { embed } = await s.agents.createEmbed({ spaceId: SPACE_A, avatarId: avatar.id });
    expect(embed?.orientation).toBe(EmbedOrientation.HORIZONTAL);
  });

  it("takes a voice agent (its own or a public one) but not together with a voice or context: 400", async () => {
    const avatar = s.catalog.addAvatar({ spaceId: SPACE_A });
    const pub = await agent(SPACE_B, true);
    const { embed } = await s.agents.createEmbed({
      spaceId: SPACE_A,
      avatarId: avatar.id,
      voiceAgentId: pub,
    });
    expect(embed?.voiceAgentId).toBe(pub);
    const voice = s.catalog.addVoice({ isPublic: true });
    for (const extra of [{ voiceId: voice.id }, { contextId: MISSING }]) {
      await expectFailure(
        s.agents.createEmbed({ spaceId: SPACE_A, avatarId: avatar.id, voiceAgentId: pub, ...extra }),
        Code.InvalidArgument,
        "voice_agent_id",
      );
    }
  });

  it("answers 404 for an avatar, voice, context or agent the space cannot use", async () => {
    const mine = s.catalog.addAvatar({ spaceId: SPACE_A });
    const theirAvatar = s.catalog.addAvatar({ spaceId: SPACE_B });
    const deleted = s.catalog.addAvatar({ spaceId: SPACE_A, status: AvatarStatus.DELETED });
    const theirVoice = s.catalog.addVoice({ spaceId: SPACE_B });
    const { context } = await s.agents.createContext({ spaceId: SPACE_B, name: "c", prompt: "p" });
    const privateAgent = await agent(SPACE_B, false);
    const cases: [object, string][] = [
      [{ avatarId: theirAvatar.id }, "avatar_id"],
      [{ avatarId: deleted.id }, "avatar_id"],
      [{ avatarId: "not-a-uuid" }, "avatar_id"],
      [{ avatarId: mine.id, voiceId: theirVoice.id }, "voice_id"],
      [{ avatarId: mine.id, contextId: context?.id }, "context_id"],
      [{ avatarId: mine.id, voiceAgentId: privateAgent }, "voice_agent_id"],
    ];
    for (const [req, field] of cases) {
      await expectFailure(s.agents.createEmbed({ spaceId: SPACE_A, ...req }), Code.NotFound, field);
    }
  });

  it("runs sandbox embeds on sandbox-enabled avatars only, and knows its languages", async () => {
    const plain = s.catalog.addAvatar({ spaceId: SPACE_A });
    const sandbox = s.catalog.addAvatar({ spaceId: SPACE_A, sandboxEnabled: true });
    await expectFailure(
      s.agents.createEmbed({ spaceId: SPACE_A, avatarId: plain.id, isSandbox: true }),
      Code.InvalidArgument,
      "is_sandbox",
    );
    const { embed } = await s.agents.createEmbed({ spaceId: SPACE_A, avatarId: sandbox.id, isSandbox: true });
    expect(embed?.isSandbox).toBe(true);
    await expectFailure(
      s.agents.createEmbed({ spaceId: SPACE_A, avatarId: plain.id, defaultLanguage: "klingon" }),
      Code.InvalidArgument,
      "default_language",
    );
    await expectFailure(
      s.agents.createEmbed({ spaceId: SPACE_A, avatarId: plain.id, maxSessionDuration: -5 }),
      Code.InvalidArgument,
      "max_session_duration",
    );
  });
});
