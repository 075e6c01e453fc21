import { EmbedOrientation } from "@avatar/contracts/agents";
import { AvatarStatus } from "@avatar/contracts/catalog";
import { AgentType } from "@avatar/contracts/common";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { agentsUnderTest, expectFailure, MISSING, SPACE_A, SPACE_B } from "./support.js";

const { s } = agentsUnderTest();

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

describe("an embed's visitor limits, origins and disabling", () => {
  const create = (extra: object = {}) => {
    const avatar = s.catalog.addAvatar({ spaceId: SPACE_A });
    return s.agents
      .createEmbed({ spaceId: SPACE_A, avatarId: avatar.id, ...extra })
      .then((r) => r.embed ?? expect.fail("no embed"));
  };

  it("takes the defaults, or the owner's values with origins normalised", async () => {
    expect(await create()).toMatchObject({
      maxConcurrentSessions: 3,
      maxSessionsPerHour: 30,
      allowedOrigins: [],
      isDisabled: false,
    });
    expect(
      await create({
        maxConcurrentSessions: 7,
        maxSessionsPerHour: 70,
        allowedOrigins: ["HTTPS://Shop.Example:443", "https://shop.example", "*"],
      }),
    ).toMatchObject({
      maxConcurrentSessions: 7,
      maxSessionsPerHour: 70,
      allowedOrigins: ["https://shop.example", "*"],
    });
  });

  it("refuses limits out of bounds and entries that are not origins: 400 naming the field", async () => {
    for (const [extra, field] of [
      [{ maxConcurrentSessions: 0 }, "max_concurrent_sessions"],
      [{ maxSessionsPerHour: 100_001 }, "max_sessions_per_hour"],
      [{ allowedOrigins: ["https://shop.example/path"] }, "allowed_origins"],
      [{ allowedOrigins: ["null"] }, "allowed_origins"],
      [{ allowedOrigins: ["ftp://shop.example"] }, "allowed_origins"],
      [{ allowedOrigins: Array.from({ length: 21 }, (_, i) => `https://h${i}.example`) }, "allowed_origins"],
    ] as const) {
      await expectFailure(create(extra), Code.InvalidArgument, field);
    }
  });

  it("lets its owner change limits and origins and disable it; absent fields stay; others get 404", async () => {
    const embed = await create({ allowedOrigins: ["https://a.example"] });
    const { embed: changed } = await s.agents.updateEmbed({
      spaceId: SPACE_A,
      embedId: embed.id,
      maxSessionsPerHour: 5,
      isDisabled: true,
    });
    expect(changed).toMatchObject({
      maxConcurrentSessions: 3,
      maxSessionsPerHour: 5,
      allowedOrigins: ["https://a.example"],
      isDisabled: true,
    });
    const { embed: cleared } = await s.agents.updateEmbed({
      spaceId: SPACE_A,
      embedId: embed.id,
      allowedOrigins: { origins: [] },
    });
    expect(cleared?.allowedOrigins).toEqual([]);
    await expectFailure(
      s.agents.updateEmbed({ spaceId: SPACE_B, embedId: embed.id, isDisabled: false }),
      Code.NotFound,
      "embed_id",
    );
    await expectFailure(
      s.agents.updateEmbed({ spaceId: SPACE_A, embedId: MISSING, isDisabled: false }),
      Code.NotFound,
      "embed_id",
    );
  });
});
