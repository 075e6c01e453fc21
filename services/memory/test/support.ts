/** Shared setup of the memory tests: a migrated `memory` schema and a context wired to test doubles. */
import { AgentsService } from "@avatar/contracts/agents";
import { SessionsService, TranscriptEntrySchema } from "@avatar/contracts/sessions";
import { createEgressFetch, egressPolicy, errorDetailOf, readSecretDestinations } from "@avatar/runtime";
import {
  callDirectly,
  collectingLogger,
  type DirectCalls,
  openServiceDb,
  type ServiceTestDb,
} from "@avatar/testkit";
import { create } from "@bufbuild/protobuf";
import { type Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { expect } from "vitest";
import type { MemoryContext } from "../src/context.js";
import { migrations } from "../src/migrations/index.js";
import type { MemoryDatabase } from "../src/schema.js";
import { createSummarizer } from "../src/summarizer.js";
import { type TranscriptLine, toLines } from "../src/transcript-lines.js";
import { AgentsServiceDouble, SessionsServiceDouble } from "./doubles.js";

export const SPACE_A = "aaaaaaaa-0000-4000-8000-000000000001";
export const SPACE_B = "bbbbbbbb-0000-4000-8000-000000000002";

export type MemoryTestDb = ServiceTestDb<MemoryDatabase>;

/** A database of this test file with the memory schema migrated. */
export const openMemoryDb = (): Promise<MemoryTestDb> =>
  openServiceDb<MemoryDatabase>("memory", migrations, 6);

export async function clearMemories(db: Kysely<MemoryDatabase>): Promise<void> {
  await db.deleteFrom("memories").execute();
}

export { collectingLogger };

export interface Harness {
  ctx: MemoryContext;
  sessions: SessionsServiceDouble;
  agents: AgentsServiceDouble;
  logs: ReturnType<typeof collectingLogger>;
}

/**
 * A MemoryContext on the test database whose sessions and agents are the test doubles, reached through
 * Connect clients on in-process router transports (so their errors travel as real Connect errors).
 */
export function harness(
  db: Kysely<MemoryDatabase>,
  options: { llmTimeoutMs?: number; preferredLlmName?: string } = {},
): Harness {
  const sessions = new SessionsServiceDouble();
  const agents = new AgentsServiceDouble();
  const logs = collectingLogger();
  const sessionsClient = createClient(
    SessionsService,
    createRouterTransport(({ service }) => service(SessionsService, sessions.impl())),
  );
  const agentsClient = createClient(
    AgentsService,
    createRouterTransport(({ service }) => service(AgentsService, agents.impl())),
  );
  const ctx: MemoryContext = {
    db,
    log: logs.log,
    contentMaxChars: 8_000,
    sessions: sessionsClient,
    summarizer: createSummarizer({
      agents: agentsClient,
      log: logs.log,
      llmTimeoutMs: options.llmTimeoutMs ?? 10_000,
      preferredLlmName: options.preferredLlmName,
      egress: loopbackEgress(),
      destinations: readSecretDestinations({}),
    }),
  };
  return { ctx, sessions, agents, logs };
}

export { callDirectly as direct, type DirectCalls };

/** Asserts the promise fails with a Connect error of `code` (and `field` in its detail, when given). */
export async function expectError(
  promise: Promise<unknown>,
  code: Code,
  field?: string,
): Promise<ConnectError> {
  const outcome = await promise.then(
    () => new Error("expected a failure, got a response"),
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(ConnectError);
  const err = outcome as ConnectError;
  expect(err.code, err.message).toBe(code);
  if (field !== undefined) expect(errorDetailOf(err)?.field).toBe(field);
  return err;
}

let counter = 0;
/** A fresh UUID with a recognisable prefix. */
export function uuid(): string {
  counter += 1;
  return `5e550000-0000-4000-8000-${counter.toString(16).padStart(12, "0")}`;
}

/** A short conversation about a trip (user and avatar turns). */
export const tripTranscript: string[][] = [
  ["user", "Hi! My name is Dana and I am planning a trip to Lisbon in May."],
  ["avatar", "Lisbon in May is lovely. How many days will you stay in Lisbon?"],
  ["user", "Five days. My budget is about 2000 euros and I love seafood."],
  [
    "avatar",
    "With five days in Lisbon you can add a day trip to Sintra. The seafood in Lisbon is excellent.",
  ],
  ["user", "Great, please remember that I prefer small hotels near the river."],
  ["avatar", "Noted: small hotels near the river in Lisbon, seafood, and a day trip to Sintra."],
];

/** The lines the service makes of a transcript given as [role, text] rows. */
export function linesOf(rows: string[][]): TranscriptLine[] {
  return toLines(rows.map(([role, transcript]) => create(TranscriptEntrySchema, { role, transcript })));
}

/** The egress guard as an operator who allowed loopback would have it: the tests' model servers listen there. */
export const loopbackEgress = () => createEgressFetch(egressPolicy({ allow: ["127.0.0.1"] }));
