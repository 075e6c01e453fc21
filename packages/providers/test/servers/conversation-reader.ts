/** Reads a Conversation's events in a test: up to a matching event, or to the end. */
import type { Conversation, ConversationEvent } from "../../src/types.js";

export class ConversationReader {
  private readonly iterator: AsyncIterator<ConversationEvent>;

  constructor(conversation: Conversation) {
    this.iterator = conversation.events[Symbol.asyncIterator]();
  }

  /** The events up to and including the first of type `type` (and matching `match`). */
  async until(
    type: ConversationEvent["type"],
    match: (event: ConversationEvent) => boolean = () => true,
  ): Promise<ConversationEvent[]> {
    const events: ConversationEvent[] = [];
    for (;;) {
      const next = await this.iterator.next();
      if (next.done)
        throw new Error(
          `events ended before a ${type} event; got ${JSON.stringify(events.map((e) => e.type))}`,
        );
      events.push(next.value);
      if (next.value.type === type && match(next.value)) return events;
    }
  }

  /** Every event until the conversation's events end. */
  async rest(): Promise<ConversationEvent[]> {
    const events: ConversationEvent[] = [];
    for (;;) {
      const next = await this.iterator.next();
      if (next.done) return events;
      events.push(next.value);
    }
  }
}
