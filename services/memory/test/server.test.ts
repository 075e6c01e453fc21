import type { Bus } from "@avatar/bus";
import { createMemoryBus } from "@avatar/bus";
import { AgentsService } from "@avatar/contracts/agents";
import { MemoryService } from "@avatar/contracts/memory";
import { SessionEndedSchema, SessionsService } from "@avatar/contracts/sessions";
import {
  createClients,
  type Listening,
  listen,
  publishEvent,
  type RunningService,
  serviceHandler,
  silentLogger,
  startService,
  topics,
} from "@avatar/runtime";
import { allowedCallerClient, createTestDatabase, type TestDatabase, testIdentity } from "@avatar/testkit";
import { create } from "@bufbuild/protobuf";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryModule } from "../src/index.js";
import { type ChatServer, startChatServer } from "./chat-server.js";
import { AgentsServiceDouble, SessionsServiceDouble } from "./doubles.js";
import { collectingLogger, expectError, SPACE_A, SPACE_B, tripTranscript, uuid } from "./support.js";

/**
 * The memory module started as the suite starts it (migrations, build, Connect server on port 0, bus
 * consumer), calling sessions and agents test doubles served on their own ports over HTTP.
 */

const API_KEY = "sk-server-test-abcdef";
const MODEL = "gpt-summary";

let database: TestDatabase;
let bus: Bus;
let running: RunningService;
let peers: Listening[];
let chat: ChatServer;
let sessions: SessionsServiceDouble;
let agents: AgentsServiceDouble;
let client: Client<typeof MemoryService>;
let url: string;
const logs = collectingLogger();

beforeAll(async () => {
  database = await createTestDatabase();
  bus = createMemoryBus({ logger: () => {} });
  sessions = new SessionsServiceDouble();
  agents = new AgentsServiceDouble();
  chat = await startChatServer({ apiKey: API_KEY, model: MODEL });
  const sessionsPeer = await listen({ port: 0, host: "127.0.0.1" });
  sessionsPeer.setHandler(
    serviceHandler(
      { name: "sessions-double", routes: (r) => r.service(SessionsService, sessions.impl()) },
      silentLogger,
      testIdentity("sessions"),
    ),
  );
  const agentsPeer = await listen({ port: 0, host: "127.0.0.1" });
  agentsPeer.setHandler(
    serviceHandler(
      { name: "agents-double", routes: (r) => r.service(AgentsService, agents.impl()) },
      silentLogger,
      testIdentity("agents"),
    ),
  );
  peers = [sessionsPeer, agentsPeer];
  const listening = await listen({ port: 0, host: "127.0.0.1" });
  running = await startService(memoryModule, {
    databaseUrl: database.url,
    bus,
    log: logs.log,
    clients: createClients({ sessions: sessionsPeer.url, agents: agentsPeer.url }, testIdentity("memory")),
    env: { MEMORY_LLM_TIMEOUT_MS: "10000", EGRESS_ALLOW: "127.0.0.1" },
    listening,
    identity: testIdentity("memory"),
    poolSize: 4,
  });
  url = listening.url;
  client = allowedCallerClient(MemoryService, url);
});

afterAll(async () => {
  await running?.stop();
  await bus?.close();
  for (const p of peers ?? []) await p.close(1_000);
  await chat?.close();
  await database?.drop();
  expect(logs.lines.join("\n")).not.toContain(API_KEY);
});

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the memory service on a real port", () => {
  it("answers health and readiness", async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it("summarises with the space's language model when it has one, extractively otherwise", async () => {
    agents.addConfiguration(
      { spaceId: SPACE_B, secretId: uuid(), baseUrl: chat.baseUrl, modelName: MODEL },
      API_KEY,
    );
    chat.behaviour = { kind: "answer", text: "Dana plans five days in Lisbon." };
    const withModel = sessions.add({ id: uuid(), spaceId: SPACE_B }, tripTranscript);
    const a = await client.createMemory({ spaceId: SPACE_B, sessionId: withModel.id });
    expect(a.memory?.sessionEpisodes[0]?.summary).toBe("Dana plans five days in Lisbon.");
    expect(chat.requests.at(-1)?.authorization).toBe(`Bearer ${API_KEY}`);

    const without = sessions.add({ id: uuid(), spaceId: SPACE_A }, tripTranscript);
    const b = await client.createMemory({ spaceId: SPACE_A, sessionId: without.id });
    expect(b.memory?.sessionEpisodes[0]?.summary).toMatch(/^User: .*\nAvatar: /s);
    expect(chat.requests).toHaveLength(1);
  });

  it("adds an episode per ended session from the bus, in order, once per session", async () => {
    const seed = sessions.add({ id: uuid(), spaceId: SPACE_A }, [["user", "First chat about violins."]]);
    const memoryId = (await client.createMemory({ spaceId: SPACE_A, sessionId: seed.id })).memory?.id ?? "";
    const episodes = async () =>
      (await client.getMemory({ spaceId: SPACE_A, memoryId })).memory?.sessionEpisodes ?? [];
    const later = ["cellos", "pianos", "flutes"].map((topic) =>
      sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, [["user", `A chat about ${topic}.`]]),
    );
    for (const [i, s] of later.entries()) {
      await publishEvent(bus, topics.sessionEnded, create(SessionEndedSchema, { session: s }), s.id);
      await until(async () => (await episodes()).length === i + 2);
    }
    // Delivered again (another message id, as after a publisher retry outside the dedupe window).
    const first = later[0];
    if (!first) throw new Error("no session");
    await publishEvent(
      bus,
      topics.sessionEnded,
      create(SessionEndedSchema, { session: first }),
      `${first.id}/2`,
    );
    const marker = sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, [
      ["user", "A chat about drums."],
    ]);
    await publishEvent(bus, topics.sessionEnded, create(SessionEndedSchema, { session: marker }), marker.id);
    await until(async () => (await episodes()).length >= 5);

    const list = await episodes();
    expect(list.map((e) => [e.sequenceNum, e.sessionId])).toEqual(
      [seed, ...later, marker].map((s, i) => [i + 1, s.id]),
    );
    const content = (await client.getMemory({ spaceId: SPACE_A, memoryId })).memory?.memoryContent ?? "";
    const order = ["violins", "cellos", "pianos", "flutes", "drums"].map((w) => content.indexOf(w));
    expect(order.every((p, i) => p >= 0 && (i === 0 || p > (order[i - 1] ?? 0)))).toBe(true);
  });

  it("answers domain errors over HTTP with their code and field", async () => {
    await expectError(client.getMemory({ spaceId: SPACE_A, memoryId: uuid() }), Code.NotFound, "memory_id");
    const other = sessions.add({ id: uuid(), spaceId: SPACE_B }, tripTranscript);
    await expectError(
      client.createMemory({ spaceId: SPACE_A, sessionId: other.id }),
      Code.NotFound,
      "session_id",
    );
  });
});
