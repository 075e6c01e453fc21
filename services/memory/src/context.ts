import type { Logger, OutboxPublisher } from "@avatar/runtime";
import type { Kysely } from "kysely";
import type { MemoryDatabase } from "./schema.js";
import type { SessionsReader } from "./session-source.js";
import type { Summarizer } from "./summarizer.js";

/** What the memory operations work with. */
export interface MemoryContext {
  db: Kysely<MemoryDatabase>;
  sessions: SessionsReader;
  summarizer: Summarizer;
  log: Logger;
  /** Upper bound of a rolled-up memory_content. */
  contentMaxChars: number;
  /** Publishes memory.created events after their transaction commits (absent: they wait in the table). */
  outbox?: OutboxPublisher;
}
