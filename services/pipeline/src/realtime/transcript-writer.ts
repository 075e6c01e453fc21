import type { TranscriptEntry } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import { BatchWriter } from "./batch-writer.js";
import type { Clock } from "./clock.js";

export type TranscriptInput = Omit<TranscriptEntry, "$typeName" | "$unknown">;
export type AppendTranscript = (entries: TranscriptInput[]) => Promise<void>;

/**
 * Writes transcript entries in order, retrying a failed write with the same entry ids (the sessions
 * service stores an entry id once, so a retry after a lost answer adds nothing).
 */
export class TranscriptWriter extends BatchWriter<TranscriptInput> {
  constructor(append: AppendTranscript, clock: Clock, log: Logger) {
    super(append, clock, log, "transcript entries");
  }

  override write(entries: TranscriptInput[]): void {
    super.write(entries.map((e) => ({ ...e, entryId: e.entryId || crypto.randomUUID() })));
  }
}
