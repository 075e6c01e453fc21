import { SecretType } from "@avatar/contracts/agents";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { agentsUnderTest, expectFailure, MISSING, SPACE_A, SPACE_B } from "./support.js";

const { s } = agentsUnderTest();

async function secret(spaceId = SPACE_A, allowedHosts = ["llm.internal"]): Promise<string> {
  const { secret } = await s.agents.createSecret({
    spaceId,
    secretName: "k",
    secretValue: "sk-1",
    secretType: SecretType.VENDORB_API_KEY,
    allowedHosts,
  });
  return secret?.id ?? expect.fail("no secret");
}

const input = async (spaceId = SPACE_A) => ({
  spaceId,
  displayName: "Self-hosted",
  modelName: "llama-3.3-70b",
  secretId: await secret(spaceId),
  baseUrl: "http://llm.internal:8000/v1",
});

describe("LLM configurations", () => {
  it("creates, gets, lists, changes and deletes a configuration", async () => {
    const { llmConfiguration: created } = await s.agents.createLlmConfiguration(await input());
    expect(created).toMatchObject({
      spaceId: SPACE_A,
      displayName: "Self-hosted",
      baseUrl: "http://llm.internal:8000/v1",
    });
    const id = created?.id ?? "";
    expect(
      (await s.agents.getLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id })).llmConfiguration
        ?.modelName,
    ).toBe("llama-3.3-70b");
    const other = await secret();
    const { llmConfiguration: changed } = await s.agents.updateLlmConfiguration({
      spaceId: SPACE_A,
      llmConfigurationId: id,
      modelName: "qwen",
      secretId: other,
      baseUrl: "https://api.example.com/openai/v1",
    });
    expect(changed).toMatchObject({ displayName: "Self-hosted", modelName: "qwen", secretId: other });
    expect(
      (await s.agents.listLlmConfigurations({ spaceId: SPACE_A })).llmConfigurations.map((c) => c.id),
    ).toEqual([id]);
    await s.agents.deleteLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id });
    await expectFailure(
      s.agents.deleteLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id }),
      Code.NotFound,
      "llm_configuration_id",
    );
  });

  it("needs a secret of the caller's space", async () => {
    const theirs = await secret(SPACE_B);
    const base = await input();
    await expectFailure(
      s.agents.createLlmConfiguration({ ...base, secretId: theirs }),
      Code.NotFound,
      "secret_id",
    );
    await expectFailure(
      s.agents.createLlmConfiguration({ ...base, secretId: MISSING }),
      Code.NotFound,
      "secret_id",
    );
    const { llmConfiguration } = await s.agents.createLlmConfiguration(base);
    await expectFailure(
      s.agents.updateLlmConfiguration({
        spaceId: SPACE_A,
        llmConfigurationId: llmConfiguration?.id ?? "",
        secretId: theirs,
      }),
      Code.NotFound,
      "secret_id",
    );
  });

  it("takes http and https base URLs only, and names within 255 characters", async () => {
    const base = await input();
    for (const baseUrl of [
      "ftp://llm.example",
      "not a url",
      "",
      "https://user:pw@llm.example/v1",
      "https://llm.example/v1#",
      "https://llm.example/v1#x",
    ]) {
      await expectFailure(
        s.agents.createLlmConfiguration({ ...base, baseUrl }),
        Code.InvalidArgument,
        "base_url",
      );
    }
    await expectFailure(
      s.agents.createLlmConfiguration({ ...base, displayName: "d".repeat(256) }),
      Code.InvalidArgument,
      "display_name",
    );
    await expectFailure(
      s.agents.createLlmConfiguration({ ...base, modelName: "" }),
      Code.InvalidArgument,
      "model_name",
    );
  });

  it("sends a secret only to its provider's hosts or the hosts bound to it (400 on base_url otherwise)", async () => {
    const unbound = await secret(SPACE_A, []);
    const base = await input();
    // The operator's vendorB endpoint is on api.example.com: a vendorB key may go there.
    await s.agents.createLlmConfiguration({
      ...base,
      secretId: unbound,
      baseUrl: "https://api.example.com/v2",
    });
    for (const baseUrl of [
      "http://llm.internal:8000/v1",
      "https://attacker.example/v1",
      "http://127.0.0.1:7001/",
    ]) {
      await expectFailure(
        s.agents.createLlmConfiguration({ ...base, secretId: unbound, baseUrl }),
        Code.InvalidArgument,
        "base_url",
      );
    }
    // A bound host: accepted; moving the configuration, or swapping its secret, is checked again.
    const { llmConfiguration } = await s.agents.createLlmConfiguration(base);
    const id = llmConfiguration?.id ?? "";
    await expectFailure(
      s.agents.updateLlmConfiguration({
        spaceId: SPACE_A,
        llmConfigurationId: id,
        baseUrl: "https://x.example/",
      }),
      Code.InvalidArgument,
      "base_url",
    );
    await expectFailure(
      s.agents.updateLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id, secretId: unbound }),
      Code.InvalidArgument,
      "base_url",
    );
    const wildcard = await secret(SPACE_A, ["*.models.example"]);
    await s.agents.createLlmConfiguration({
      ...base,
      secretId: wildcard,
      baseUrl: "https://eu.models.example/v1",
    });
  });

  it("answers another space's configuration like a missing one", async () => {
    const { llmConfiguration } = await s.agents.createLlmConfiguration(await input(SPACE_B));
    const id = llmConfiguration?.id ?? "";
    await expectFailure(
      s.agents.getLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id }),
      Code.NotFound,
    );
    await expectFailure(
      s.agents.updateLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id, displayName: "x" }),
      Code.NotFound,
    );
    await expectFailure(
      s.agents.deleteLlmConfiguration({ spaceId: SPACE_A, llmConfigurationId: id }),
      Code.NotFound,
    );
    expect((await s.agents.listLlmConfigurations({ spaceId: SPACE_A })).llmConfigurations).toEqual([]);
  });
});
