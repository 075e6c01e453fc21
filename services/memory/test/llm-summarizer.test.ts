import { AgentsService } from "@avatar/contracts/agents";
import { createEgressFetch, type EgressFetch, egressPolicy, readSecretDestinations } from "@avatar/runtime";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { extractiveSummary } from "../src/extractive-summarizer.js";
import { SUMMARY_INSTRUCTIONS } from "../src/llm-summarizer.js";
import { createSummarizer, type Summarizer } from "../src/summarizer.js";
import { type ChatServer, startChatServer } from "./chat-server.js";
import { AgentsServiceDouble } from "./doubles.js";
import {
  collectingLogger,
  linesOf,
  loopbackEgress,
  SPACE_A,
  SPACE_B,
  tripTranscript,
  uuid,
} from "./support.js";

/** The language-model path against a local chat-completions server, and every way it falls back. */

const API_KEY = "sk-test-memory-0123456789";
const MODEL = "gpt-memory-test";
const lines = linesOf(tripTranscript);

let chat: ChatServer;
let agents: AgentsServiceDouble;
let logs: ReturnType<typeof collectingLogger>;

beforeAll(async () => {
  chat = await startChatServer({ apiKey: API_KEY, model: MODEL });
});
afterAll(async () => {
  await chat.close();
});
afterEach(() => {
  chat.requests.length = 0;
  chat.behaviour = { kind: "answer", text: "The user is planning a trip." };
  // The key never reaches a log line.
  expect(logs.lines.join("\n")).not.toContain(API_KEY);
});

function summarizer(
  options: { timeoutMs?: number; preferredName?: string; egress?: EgressFetch } = {},
): Summarizer {
  agents = new AgentsServiceDouble();
  logs = collectingLogger();
  const client = createClient(
    AgentsService,
    createRouterTransport(({ service }) => service(AgentsService, agents.impl())),
  );
  return createSummarizer({
    agents: client,
    log: logs.log,
    llmTimeoutMs: options.timeoutMs ?? 10_000,
    preferredLlmName: options.preferredName,
    egress: options.egress ?? loopbackEgress(),
    destinations: readSecretDestinations({}),
  });
}

describe("the base_url goes through the egress guard", () => {
  it("refuses a base_url on a loopback address the operator did not allow: no request, the extractive summary", async () => {
    const s = summarizer({ egress: createEgressFetch(egressPolicy()) });
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      API_KEY,
    );
    expect(await s.summarize(SPACE_A, lines)).toEqual({
      text: extractiveSummary(lines),
      source: "extractive",
    });
    expect(chat.requests).toHaveLength(0);
    expect(logs.lines.join("\n")).toContain("base_url refused");
  });

  it("refuses a base_url with user info or a fragment", async () => {
    const s = summarizer();
    const [scheme, rest] = chat.baseUrl.split("//");
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: `${scheme}//user:pw@${rest}#`, modelName: MODEL },
      API_KEY,
    );
    expect((await s.summarize(SPACE_A, lines)).source).toBe("extractive");
    expect(chat.requests).toHaveLength(0);
  });
});

describe("the configuration's secret (finding 2)", () => {
  it("is never sent to a host the secret is not bound to: no request, the extractive summary", async () => {
    const s = summarizer();
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      API_KEY,
      [],
    );
    expect((await s.summarize(SPACE_A, lines)).source).toBe("extractive");
    expect(chat.requests).toHaveLength(0);
    expect(logs.lines.join("\n")).toContain("may not be sent");
  });

  it("echoed back by the model, as it is or JSON-escaped, is scrubbed before the summary is kept", async () => {
    const s = summarizer();
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      API_KEY,
    );
    const escaped = [...API_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
    chat.behaviour = { kind: "answer", text: `The key is ${API_KEY}. Escaped: "${escaped}".` };
    const summary = await s.summarize(SPACE_A, lines);
    expect(summary).toEqual({ text: 'The key is [secret]. Escaped: "[secret]".', source: "llm" });
  });
});

describe("with the space's language model", () => {
  it("sends the transcript to {base_url}/chat/completions with the model and the bearer key, and keeps the answer", async () => {
    const s = summarizer();
    const secretId = uuid();
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId, baseUrl: `${chat.baseUrl}/`, modelName: MODEL },
      API_KEY,
    );
    chat.behaviour = { kind: "answer", text: "  Dana plans five days in Lisbon in May.\n" };

    expect(await s.summarize(SPACE_A, lines)).toEqual({
      text: "Dana plans five days in Lisbon in May.",
      source: "llm",
    });
    expect(chat.requests).toHaveLength(1);
    const [req] = chat.requests;
    expect(req?.path).toBe("/v1/chat/completions");
    expect(req?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req?.body.model).toBe(MODEL);
    expect(req?.body.stream).toBe(false);
    expect(req?.body.messages?.map((m) => m.role)).toEqual(["system", "user"]);
    expect(req?.body.messages?.[0]?.content).toBe(SUMMARY_INSTRUCTIONS);
    expect(req?.body.messages?.[1]?.content).toContain("user: Hi! My name is Dana");
    expect(req?.body.messages?.[1]?.content).toContain("avatar: Noted: small hotels near the river");
  });

  it("uses the configuration named by the setting, else the first one", async () => {
    const s = summarizer({ preferredName: "Summaries" });
    const otherServer = await startChatServer({ apiKey: "sk-other", model: "other-model" });
    try {
      agents.addConfiguration(
        {
          spaceId: SPACE_A,
          secretId: uuid(),
          displayName: "Chat",
          baseUrl: otherServer.baseUrl,
          modelName: "other-model",
        },
        "sk-other",
      );
      agents.addConfiguration(
        {
          spaceId: SPACE_A,
          secretId: uuid(),
          displayName: "Summaries",
          baseUrl: chat.baseUrl,
          modelName: MODEL,
        },
        API_KEY,
      );
      expect((await s.summarize(SPACE_A, lines)).source).toBe("llm");
      expect(chat.requests).toHaveLength(1);
      expect(otherServer.requests).toHaveLength(0);

      const first = summarizer({ preferredName: "No such name" });
      agents.addConfiguration(
        {
          spaceId: SPACE_A,
          secretId: uuid(),
          displayName: "Chat",
          baseUrl: otherServer.baseUrl,
          modelName: "other-model",
        },
        "sk-other",
      );
      agents.addConfiguration(
        {
          spaceId: SPACE_A,
          secretId: uuid(),
          displayName: "Summaries2",
          baseUrl: chat.baseUrl,
          modelName: MODEL,
        },
        API_KEY,
      );
      expect((await first.summarize(SPACE_A, lines)).source).toBe("llm");
      expect(otherServer.requests).toHaveLength(1);
    } finally {
      await otherServer.close();
    }
  });
});

describe("falls back to the extractive summary", () => {
  const extractive = { text: extractiveSummary(lines), source: "extractive" };

  it("when the space has no LLM configuration (another space's does not count)", async () => {
    const s = summarizer();
    agents.addConfiguration(
      { spaceId: SPACE_B, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      API_KEY,
    );
    expect(await s.summarize(SPACE_A, lines)).toEqual(extractive);
    expect(chat.requests).toHaveLength(0);
  });

  it("when the configuration's secret cannot be revealed", async () => {
    const s = summarizer();
    agents.addConfiguration({ spaceId: SPACE_A, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL });
    expect(await s.summarize(SPACE_A, lines)).toEqual(extractive);
    expect(agents.revealCalls).toBe(1);
    expect(chat.requests).toHaveLength(0);
    expect(logs.records().some((r) => r.level === "warn" && r.space_id === SPACE_A)).toBe(true);
  });

  it.each([
    ["an error status", { kind: "status", status: 500 } as const],
    ["an empty answer", { kind: "answer", text: "   " } as const],
  ])("when the endpoint answers %s", async (_name, behaviour) => {
    const s = summarizer();
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      API_KEY,
    );
    chat.behaviour = behaviour;
    expect(await s.summarize(SPACE_A, lines)).toEqual(extractive);
    expect(chat.requests).toHaveLength(1);
  });

  it("when the key is refused (the server checks the bearer)", async () => {
    const s = summarizer();
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      "sk-wrong",
    );
    expect(await s.summarize(SPACE_A, lines)).toEqual(extractive);
    const warning = logs.records().find((r) => r.level === "warn");
    expect(warning?.reason).toBe("chat completions endpoint answered 401");
    expect(logs.lines.join("\n")).not.toContain("sk-wrong");
  });

  it("when the endpoint does not answer within the timeout", async () => {
    const s = summarizer({ timeoutMs: 300 });
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      API_KEY,
    );
    chat.behaviour = { kind: "hang" };
    expect(await s.summarize(SPACE_A, lines)).toEqual(extractive);
    expect(logs.records().find((r) => r.level === "warn")?.reason).toBe(
      "chat completions endpoint timed out",
    );
  });

  it("when nothing listens at the base URL", async () => {
    const s = summarizer();
    agents.addConfiguration(
      { spaceId: SPACE_A, secretId: uuid(), baseUrl: "http://127.0.0.1:9/v1", modelName: MODEL },
      API_KEY,
    );
    expect(await s.summarize(SPACE_A, lines)).toEqual(extractive);
  });

  it("without an agents service at all", async () => {
    const s = createSummarizer({
      log: collectingLogger().log,
      llmTimeoutMs: 1000,
      egress: loopbackEgress(),
      destinations: readSecretDestinations({}),
    });
    logs = collectingLogger();
    expect(await s.summarize(SPACE_A, lines)).toEqual(extractive);
  });
});
