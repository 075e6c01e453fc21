import { SecretType, VoiceAgentScope } from "@avatar/contracts/agents";
import { AgentType } from "@avatar/contracts/common";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { agentsUnderTest, expectFailure, MISSING, SPACE_A, SPACE_B } from "./support.js";

const { t, s } = agentsUnderTest();

async function secret(spaceId: string, secretType: SecretType): Promise<string> {
  const { secret } = await s.agents.createSecret({
    spaceId,
    secretName: "key",
    secretValue: "sk-test",
    secretType,
  });
  return secret?.id ?? expect.fail("no secret");
}

async function context(spaceId: string, isPublic = false): Promise<string> {
  const { context } = await s.agents.createContext({ spaceId, name: "c", prompt: "p", isPublic });
  return context?.id ?? expect.fail("no context");
}

const managed = (value: object = {}) => ({ configuration: { case: "managed" as const, value } });

describe("the four agent types", () => {
  it("stores a managed agent and reads it back with the default model when it has no LLM settings", async () => {
    const voice = s.catalog.addVoice({ isPublic: true });
    const contextId = await context(SPACE_A);
    const { voiceAgent } = await s.agents.createVoiceAgent({
      spaceId: SPACE_A,
      name: "Concierge",
      agentType: AgentType.MANAGED_AGENT,
      agentConfiguration: managed({ voiceId: voice.id, contextId, language: "ja" }),
    });
    expect(voiceAgent).toMatchObject({
      name: "Concierge",
      agentType: AgentType.MANAGED_AGENT,
      isPublic: false,
    });
    const c = voiceAgent?.agentConfiguration?.configuration;
    expect(c?.case).toBe("managed");
    if (c?.case !== "managed") return;
    expect(c.value).toMatchObject({ voiceId: voice.id, contextId, language: "ja" });
    expect(c.value.llmSettings).toMatchObject({ provider: "vendorB", model: "gpt-5.4-nano" });
    // The default is a read-back: what is stored stays without LLM settings.
    const row = await t.db.selectFrom("voice_agents").select("configuration").executeTakeFirstOrThrow();
    expect(JSON.stringify(row.configuration)).not.toContain("llm_settings");
  });

  it("keeps LLM settings that were given", async () => {
    const { voiceAgent } = await s.agents.createVoiceAgent({
      spaceId: SPACE_A,
      name: "m",
      agentType: AgentType.MANAGED_AGENT,
      agentConfiguration: managed({ llmSettings: { provider: "vendorB", model: "gpt-4o" } }),
    });
    const c = voiceAgent?.agentConfiguration?.configuration;
    expect(c?.case === "managed" && c.value.llmSettings?.model).toBe("gpt-4o");
  });

  it("accepts a managed agent without any configuration", async () => {
    const { voiceAgent } = await s.agents.createVoiceAgent({
      spaceId: SPACE_A,
      name: "bare",
      agentType: AgentType.MANAGED_AGENT,
    });
    expect(voiceAgent?.agentConfiguration?.configuration.case).toBe("managed");
  });

  it("stores vendorA and vendorD agents with a key of their provider", async () => {
    const a = await s.agents.createVoiceAgent({
      spaceId: SPACE_A,
      name: "a",
      agentType: AgentType.VENDOR_A_AGENT,
      agentConfiguration: {
        configuration: {
          case: "vendorA",
          value: {
            secretId: await secret(SPACE_A, SecretType.VENDORA_API_KEY),
            agentId: "agent_1",
            voiceId: "v1",
          },
        },
      },
    });
    expect(a.voiceAgent?.agentConfiguration?.configuration).toMatchObject({
      case: "vendorA",
      value: { agentId: "agent_1", voiceId: "v1" },
    });
    const d = await s.agents.createVoiceAgent({
      spaceId: SPACE_A,
      name: "d",
      agentType: AgentType.VENDOR_D_AGENT,
      agentConfiguration: {
        configuration: {
          case: "vendorD",
          value: { secretId: await secret(SPACE_A, SecretType.VENDORD_API_KEY), agentId: "agent_2" },
        },
      },
    });
    expect(d.voiceAgent?.agentType).toBe(AgentType.VENDOR_D_AGENT);
  });

  it("gives a vendorB agent the defaults of its model's family", async () => {
    const secretId = await secret(SPACE_A, SecretType.VENDORB_API_KEY);
    const create = (value: object) =>
      s.agents.createVoiceAgent({
        spaceId: SPACE_A,
        name: "b",
        agentType: AgentType.VENDOR_B_AGENT,
        agentConfiguration: { configuration: { case: "vendorB", value: { secretId, ...value } } },
      });
    const realtime = (await create({})).voiceAgent?.agentConfiguration?.configuration;
    expect(realtime).toMatchObject({ value: { model: "gpt-realtime", voice: "alloy", temperature: 0.8 } });
    const live = (await create({ model: "gpt-live-1", temperature: 1.1 })).voiceAgent?.agentConfiguration
      ?.configuration;
    expect(live).toMatchObject({ value: { model: "gpt-live-1", voice: "marin", temperature: 0 } });
    const given = (await create({ model: "gpt-realtime-mini", voice: "cedar", temperature: 1.2 })).voiceAgent
      ?.agentConfiguration?.configuration;
    expect(given).toMatchObject({ value: { voice: "cedar", temperature: 1.2 } });
  });
});

describe("configuration that does not fit", () => {
  it("refuses a configuration of another type, and a missing one where the type needs it: 400", async () => {
    await expectFailure(
      s.agents.createVoiceAgent({
        spaceId: SPACE_A,
        name: "x",
        agentType: AgentType.VENDOR_D_AGENT,
        agentConfiguration: managed(),
      }),
      Code.InvalidArgument,
      "agent_configuration",
    );
    await expectFailure(
      s.agents.createVoiceAgent({ spaceId: SPACE_A, name: "x", agentType: AgentType.VENDOR_B_AGENT }),
      Code.InvalidArgument,
      "agent_configuration",
    );
  });

  it("refuses an unknown agent type and a name over 255 characters", async () => {
    await expectFailure(
      s.agents.createVoiceAgent({ spaceId: SPACE_A, name: "x", agentType: 99 as AgentType }),
      Code.InvalidArgument,
      "agent_type",
    );
    await expectFailure(
      s.agents.createVoiceAgent({
        spaceId: SPACE_A,
        name: "x".repeat(256),
        agentType: AgentType.MANAGED_AGENT,
      }),
      Code.InvalidArgument,
      "name",
    );
  });

  it("needs the key of the agent's provider", async () => {
    const wrongKind = await secret(SPACE_A, SecretType.VENDORB_API_KEY);
    await expectFailure(
      s.agents.createVoiceAgent({
        spaceId: SPACE_A,
        name: "a",
        agentType: AgentType.VENDOR_A_AGENT,
        agentConfiguration: {
          configuration: { case: "vendorA", value: { secretId: wrongKind, agentId: "x" } },
        },
      }),
      Code.InvalidArgument,
      "agent_configuration.secret_id",
    );
  });

  it("names the field of every id that the space cannot use: 404", async () => {
    const theirVoice = s.catalog.addVoice({ spaceId: SPACE_B });
    const theirContext = await context(SPACE_B);
    const theirSecret = await secret(SPACE_B, SecretType.VENDORB_API_KEY);
    const { llmConfiguration } = await s.agents.createLlmConfiguration({
      spaceId: SPACE_B,
      displayName: "l",
      modelName: "m",
      secretId: theirSecret,
      baseUrl: "https://api.example.com/v1",
    });
    const cases: [object, string][] = [
      [managed({ voiceId: theirVoice.id }), "agent_configuration.voice_id"],
      [managed({ voiceId: MISSING }), "agent_configuration.voice_id"],
      [managed({ contextId: theirContext }), "agent_configuration.context_id"],
      [managed({ llmConfigurationId: llmConfiguration?.id }), "agent_configuration.llm_configuration_id"],
      [managed({ contextId: "not-a-uuid" }), "agent_configuration.context_id"],
    ];
    for (const [agentConfiguration, field] of cases) {
      await expectFailure(
        s.agents.createVoiceAgent({
          spaceId: SPACE_A,
          name: "x",
          agentType: AgentType.MANAGED_AGENT,
          agentConfiguration,
        }),
        Code.NotFound,
        field,
      );
    }
    await expectFailure(
      s.agents.createVoiceAgent({
        spaceId: SPACE_A,
        name: "b",
        agentType: AgentType.VENDOR_B_AGENT,
        agentConfiguration: { configuration: { case: "vendorB", value: { secretId: theirSecret } } },
      }),
      Code.NotFound,
      "agent_configuration.secret_id",
    );
  });

  it("accepts a public context of another space and refuses an unknown language", async () => {
    const pub = await context(SPACE_B, true);
    const ok = await s.agents.createVoiceAgent({
      spaceId: SPACE_A,
      name: "m",
      agentType: AgentType.MANAGED_AGENT,
      agentConfiguration: managed({ contextId: pub }),
    });
    expect(ok.voiceAgent).toBeDefined();
    await expectFailure(
      s.agents.createVoiceAgent({
        spaceId: SPACE_A,
        name: "m",
        agentType: AgentType.MANAGED_AGENT,
        agentConfiguration: managed({ language: "xx" }),
      }),
      Code.InvalidArgument,
      "agent_configuration.language",
    );
  });
});

describe("visibility, changes and deletion", () => {
  const agent = (spaceId: string, name: string, isPublic: boolean) =>
    s.agents
      .createVoiceAgent({ spaceId, name, agentType: AgentType.MANAGED_AGENT, isPublic })
      .then((r) => r.voiceAgent ?? expect.fail("no agent"));

  it("lists the space's own agents (private scope) or every public one", async () => {
    await agent(SPACE_A, "mine", false);
    await agent(SPACE_A, "mine public", true);
    await agent(SPACE_B, "theirs", false);
    await agent(SPACE_B, "theirs public", true);
    const names = async (scope: VoiceAgentScope) =>
      (await s.agents.listVoiceAgents({ spaceId: SPACE_A, scope })).voiceAgents.map((a) => a.name);
    expect(await names(VoiceAgentScope.PRIVATE)).toEqual(["mine public", "mine"]);
    expect(await names(VoiceAgentScope.UNSPECIFIED)).toEqual(["mine public", "mine"]);
    expect(await names(VoiceAgentScope.PUBLIC)).toEqual(["theirs public", "mine public"]);
  });

  it("lets every space read a public agent, only its owner change or delete it", async () => {
    const pub = await agent(SPACE_B, "shared", true);
    const priv = await agent(SPACE_B, "hidden", false);
    expect((await s.agents.getVoiceAgent({ spaceId: SPACE_A, voiceAgentId: pub.id })).voiceAgent?.name).toBe(
      "shared",
    );
    await expectFailure(
      s.agents.getVoiceAgent({ spaceId: SPACE_A, voiceAgentId: priv.id }),
      Code.NotFound,
      "voice_agent_id",
    );
    for (const id of [pub.id, priv.id]) {
      await expectFailure(
        s.agents.updateVoiceAgent({ spaceId: SPACE_A, voiceAgentId: id, name: "taken" }),
        Code.NotFound,
        "voice_agent_id",
      );
      await expectFailure(
        s.agents.deleteVoiceAgent({ spaceId: SPACE_A, voiceAgentId: id }),
        Code.NotFound,
        "voice_agent_id",
      );
    }
    const renamed = await s.agents.updateVoiceAgent({
      spaceId: SPACE_B,
      voiceAgentId: pub.id,
      name: "renamed",
      isPublic: false,
    });
    expect(renamed.voiceAgent).toMatchObject({ name: "renamed", isPublic: false });
  });

  it("changes the type only together with a configuration of the new type", async () => {
    const a = await agent(SPACE_A, "m", false);
    await expectFailure(
      s.agents.updateVoiceAgent({
        spaceId: SPACE_A,
        voiceAgentId: a.id,
        agentType: AgentType.VENDOR_D_AGENT,
      }),
      Code.InvalidArgument,
      "agent_configuration",
    );
    const secretId = await secret(SPACE_A, SecretType.VENDORD_API_KEY);
    const { voiceAgent } = await s.agents.updateVoiceAgent({
      spaceId: SPACE_A,
      voiceAgentId: a.id,
      agentType: AgentType.VENDOR_D_AGENT,
      agentConfiguration: { configuration: { case: "vendorD", value: { secretId, agentId: "ag" } } },
    });
    expect(voiceAgent).toMatchObject({ agentType: AgentType.VENDOR_D_AGENT, name: "m" });
    // A configuration alone is checked against the stored type.
    await expectFailure(
      s.agents.updateVoiceAgent({ spaceId: SPACE_A, voiceAgentId: a.id, agentConfiguration: managed() }),
      Code.InvalidArgument,
      "agent_configuration",
    );
  });

  it("deletes once; the second delete is a 404", async () => {
    const a = await agent(SPACE_A, "m", false);
    await s.agents.deleteVoiceAgent({ spaceId: SPACE_A, voiceAgentId: a.id });
    await expectFailure(
      s.agents.deleteVoiceAgent({ spaceId: SPACE_A, voiceAgentId: a.id }),
      Code.NotFound,
      "voice_agent_id",
    );
  });
});
