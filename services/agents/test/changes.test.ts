import { SecretType } from "@avatar/contracts/agents";
import { AgentType } from "@avatar/contracts/common";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { agentsUnderTest, expectFailure, SPACE_A, SPACE_B } from "./support.js";

// What the tokens service caches (a mint's context, voice agent, LLM configuration and secret's type)
// must be announced before a change is answered: the caller's next mint may follow at once.

const { s } = agentsUnderTest();

const context = async () =>
  (await s.agents.createContext({ spaceId: SPACE_A, name: "c", prompt: "p" })).context?.id ?? "";
const secret = async () =>
  (
    await s.agents.createSecret({
      spaceId: SPACE_A,
      secretName: "k",
      secretValue: "sk-1",
      secretType: SecretType.VENDORB_API_KEY,
      allowedHosts: ["llm.internal"],
    })
  ).secret?.id ?? "";

describe("announced changes", () => {
  it("answers a context's update and delete once the change was announced; a creation announces nothing", async () => {
    const id = await context();
    expect(s.told).toEqual([]);
    await s.agents.updateContext({ spaceId: SPACE_A, contextId: id, prompt: "new" });
    expect(s.told).toEqual([`contexts ${id}`]);
    await s.agents.deleteContext({ spaceId: SPACE_A, contextId: id });
    expect(s.told).toEqual([`contexts ${id}`, `contexts ${id}`]);
  });

  it("answers a voice agent's update and delete once the change was announced", async () => {
    const { voiceAgent } = await s.agents.createVoiceAgent({
      spaceId: SPACE_A,
      name: "a",
      agentType: AgentType.MANAGED_AGENT,
    });
    const id = voiceAgent?.id ?? "";
    await s.agents.updateVoiceAgent({ spaceId: SPACE_A, voiceAgentId: id, name: "b" });
    await s.agents.deleteVoiceAgent({ spaceId: SPACE_A, voiceAgentId: id });
    expect(s.told).toEqual([`voiceAgents ${id}`, `voiceAgents ${id}`]);
  });

  it("answers an LLM configuration's update and delete, and a secret's delete, once announced", async () => {
    const secretId = await secret();
    const { llmConfiguration } = await s.agents.createLlmConfiguration({
      spaceId: SPACE_A,
      displayName: "d",
      modelName: "m",
      secretId,
      baseUrl: "http://llm.internal:8000/v1",
    });
    const id = llmConfiguration?.id ?? "";
    await s.agents.updateLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id, modelName: "n" });
    await s.agents.deleteLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id });
    await s.agents.deleteSecret({ spaceId: SPACE_A, secretId });
    expect(s.told).toEqual([`llmConfigurations ${id}`, `llmConfigurations ${id}`, `secrets ${secretId}`]);
  });

  it("answers an embed's update (disabled, limits, origins) once the change was announced", async () => {
    const avatar = s.catalog.addAvatar({ spaceId: SPACE_A });
    const { embed } = await s.agents.createEmbed({ spaceId: SPACE_A, avatarId: avatar.id });
    const id = embed?.id ?? "";
    await s.agents.updateEmbed({ spaceId: SPACE_A, embedId: id, isDisabled: true });
    expect(s.told).toEqual([`embeds ${id}`]);
  });

  it("announces nothing for a change that was refused", async () => {
    const id = await context();
    await expectFailure(
      s.agents.updateContext({ spaceId: SPACE_A, contextId: id, prompt: "" }),
      Code.InvalidArgument,
      "prompt",
    );
    await expectFailure(
      s.agents.deleteContext({ spaceId: SPACE_B, contextId: id }),
      Code.NotFound,
      "context_id",
    );
    expect(s.told).toEqual([]);
  });
});
