import type { Bus, DurableConsumerOptions, DurableMessage, Subscription } from "@avatar/bus";
import { type MemoryCreated, MemoryCreatedSchema } from "@avatar/contracts/memory";
import {
  type SessionEnded,
  SessionEndedSchema,
  type SessionStarted,
  SessionStartedSchema,
  type TranscriptWritten,
  TranscriptWrittenSchema,
} from "@avatar/contracts/sessions";
import { fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";

/** A durable bus subject together with the protobuf message it carries. */
export interface Topic<T extends Message> {
  readonly subject: string;
  readonly schema: GenMessage<T>;
}

function topic<T extends Message>(subject: string, schema: GenMessage<T>): Topic<T> {
  return { subject, schema };
}

export const topics = {
  sessionStarted: topic<SessionStarted>("events.sessions.started", SessionStartedSchema),
  sessionEnded: topic<SessionEnded>("events.sessions.ended", SessionEndedSchema),
  transcriptWritten: topic<TranscriptWritten>("events.sessions.transcript_written", TranscriptWrittenSchema),
  memoryCreated: topic<MemoryCreated>("events.memory.created", MemoryCreatedSchema),
};

/** Publishes durably; `msgId` makes a retried publish of the same fact count once. */
export function publishEvent<T extends Message>(
  bus: Bus,
  t: Topic<T>,
  value: T,
  msgId?: string,
): Promise<void> {
  return bus.publishDurable(t.subject, toBinary(t.schema, value), msgId ? { msgId } : {});
}

/** Consumes a topic as `consumer` (replicas with one name share the work); a throwing handler gets it again. */
export function consumeEvent<T extends Message>(
  bus: Bus,
  t: Topic<T>,
  consumer: string,
  handler: (value: T, msg: DurableMessage) => Promise<void> | void,
  options?: DurableConsumerOptions,
): Promise<Subscription> {
  return bus.consumeDurable(
    t.subject,
    consumer,
    (msg) => handler(fromBinary(t.schema, msg.data), msg),
    options,
  );
}
