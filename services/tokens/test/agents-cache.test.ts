import { createMemoryBus } from "@avatar/bus";
import {
  type Context,
  ContextSchema,
  EmbedSchema,
  LlmConfigurationSchema,
  SecretSchema,
  SecretType,
  VoiceAgentSchema,
} from "@avatar/contracts/agents";
import { cacheInvalidations, notFound, publishInvalidation } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type AgentsLookup, cachedAgents } from "../src/agents-cache.js";

const SPACE = "5a5a5a5a-0000-4000-8000-000000000001";
const OTHER = "6b6b6b6b-0000-4000-8000-000000000002";
const CONTEXT = "0c0c0c0c-0000-4000-8000-000000000001";
const AGENT = "0a0a0a0a-0000-4000-8000-000000000002";
const LLM = "0e0e0e0e-0000-4000-8000-000000000003";
const SECRET = "0f0f0f0f-0000-4000-8000-000000000004";
const EMBED = "0e0b0e0b-0000-4000-8000-000000000005";
const MISSING = "00000000-0000-4000-8000-000000000000";

/** An agents service that counts its answers: SPACE's public context, voice agent, LLM configuration and secret. */
function countingAgents() {
  const contexts = new Map<string, Context>([
    [CONTEXT, create(ContextSchema, { id: CONTEXT, spaceId: SPACE, prompt: "first", isPublic: true })],
  ]);
  const calls: string[] = [];
  const find = <V extends { spaceId: string }>(kind: string, value: V | undefined, spaceId = "") => {
    calls.push(kind);
    const readable = value && (value.spaceId === spaceId || ("isPublic" in value && value.isPublic));
    if (!readable) throw notFound(`${kind} not found`, { field: kind });
    return value;
  };
  const agents = {
    getContext: async (req: { spaceId?: string; contextId?: string }) => ({
      // Ids are taken in lower case, as the agents service stores them.
      context: find("context", contexts.get((req.contextId ?? "").toLowerCase()), req.spaceId),
    }),
    getVoiceAgent: async (req: { spaceId?: string; voiceAgentId?: string }) => ({
      voiceAgent: find(
        "voice_agent",
        req.voiceAgentId === AGENT ? create(VoiceAgentSchema, { id: AGENT, spaceId: SPACE }) : undefined,
        req.spaceId,
      ),
    }),
    getLlmConfiguration: async (req: { spaceId?: string; llmConfigurationId?: string }) => ({
      llmConfiguration: find(
        "llm_configuration",
        req.llmConfigurationId === LLM
          ? create(LlmConfigurationSchema, { id: LLM, spaceId: SPACE })
          : undefined,
        req.spaceId,
      ),
    }),
    getSecret: async (req: { spaceId?: string; secretId?: string }) => ({
      secret: find(
        "secret",
        req.secretId === SECRET
          ? create(SecretSchema, { id: SECRET, spaceId: SPACE, secretType: SecretType.VENDORA_API_KEY })
          : undefined,
        req.spaceId,
      ),
    }),
    // By id alone: a visitor has no space.
    getEmbed: async (req: { embedId?: string }) => ({
      embed: find("embed", req.embedId === EMBED ? create(EmbedSchema, { id: EMBED }) : undefined),
    }),
  };
  return {
    calls,
    contexts,
    lookup: (bus?: ReturnType<typeof createMemoryBus>) =>
      cachedAgents(agents as unknown as AgentsLookup, bus),
  };
}

const prompt = (lookup: AgentsLookup, spaceId = SPACE) =>
  lookup.getContext({ spaceId, contextId: CONTEXT }).then((r) => r.context?.prompt);

/** Every lookup a mint may make, once. */
async function everyLookup(lookup: AgentsLookup) {
  return [
    await prompt(lookup),
    (await lookup.getVoiceAgent({ spaceId: SPACE, voiceAgentId: AGENT })).voiceAgent?.id,
    (await lookup.getLlmConfiguration({ spaceId: SPACE, llmConfigurationId: LLM })).llmConfiguration?.id,
    (await lookup.getSecret({ spaceId: SPACE, secretId: SECRET })).secret?.secretType,
    (await lookup.getEmbed({ embedId: EMBED })).embed?.id,
  ];
}

describe("cachedAgents", () => {
  it("asks the agents service once for each context, voice agent, LLM configuration and secret", async () => {
    const { calls, lookup } = countingAgents();
    const cached = lookup();
    for (let i = 0; i < 3; i++) {
      expect(await everyLookup(cached)).toEqual(["first", AGENT, LLM, SecretType.VENDORA_API_KEY, EMBED]);
    }
    expect(calls).toEqual(["context", "voice_agent", "llm_configuration", "secret", "embed"]);
  });

  it("keeps what each space was answered apart, and remembers no absence", async () => {
    const { calls, lookup } = countingAgents();
    const cached = lookup();
    expect(await prompt(cached, SPACE)).toBe("first");
    expect(await prompt(cached, OTHER)).toBe("first");
    for (let i = 0; i < 2; i++) {
      const err = await cached.getSecret({ spaceId: OTHER, secretId: SECRET }).catch((e: unknown) => e);
      expect(err instanceof ConnectError && err.code).toBe(Code.NotFound);
      await expect(cached.getContext({ spaceId: SPACE, contextId: MISSING })).rejects.toThrow(/not found/);
    }
    expect(calls).toEqual(["context", "context", "secret", "context", "secret", "context"]);
  });

  it("drops a context for every space the moment the agents service's change is confirmed, and only the context", async () => {
    const bus = createMemoryBus();
    const { calls, contexts, lookup } = countingAgents();
    const cached = lookup(bus);
    await everyLookup(cached);
    expect(await prompt(cached, OTHER)).toBe("first");
    contexts.set(
      CONTEXT,
      create(ContextSchema, { id: CONTEXT, spaceId: SPACE, prompt: "second", isPublic: true }),
    );
    expect(await prompt(cached)).toBe("first");
    // What the agents service awaits before it answers the update: after it, no waiting.
    await publishInvalidation(bus, cacheInvalidations.contexts, CONTEXT);
    expect(await prompt(cached)).toBe("second");
    expect(await prompt(cached, OTHER)).toBe("second");
    calls.length = 0;
    expect(await everyLookup(cached)).toEqual(["second", AGENT, LLM, SecretType.VENDORA_API_KEY, EMBED]);
    expect(calls).toEqual([]);
    await bus.close();
  });

  it("drops what a request named in upper case when the agents service names its stored (lower-case) id", async () => {
    const bus = createMemoryBus();
    const { calls, contexts, lookup } = countingAgents();
    const cached = lookup(bus);
    const upper = { spaceId: SPACE, contextId: CONTEXT.toUpperCase() };
    expect((await cached.getContext(upper)).context?.prompt).toBe("first");
    expect(await prompt(cached)).toBe("first");
    expect(calls).toEqual(["context"]);
    contexts.set(
      CONTEXT,
      create(ContextSchema, { id: CONTEXT, spaceId: SPACE, prompt: "second", isPublic: true }),
    );
    await publishInvalidation(bus, cacheInvalidations.contexts, CONTEXT);
    expect((await cached.getContext(upper)).context?.prompt).toBe("second");
    await bus.close();
  });

  it("drops a voice agent, an LLM configuration, a secret and an embed each on its own subject", async () => {
    const bus = createMemoryBus();
    const { calls, lookup } = countingAgents();
    const cached = lookup(bus);
    await everyLookup(cached);
    const changed: [string, string][] = [
      [cacheInvalidations.voiceAgents, AGENT],
      [cacheInvalidations.llmConfigurations, LLM],
      [cacheInvalidations.secrets, SECRET],
      [cacheInvalidations.embeds, EMBED],
    ];
    for (const [subject, id] of changed) await publishInvalidation(bus, subject, id);
    calls.length = 0;
    await everyLookup(cached);
    expect(calls).toEqual(["voice_agent", "llm_configuration", "secret", "embed"]);
    await bus.close();
  });
});
