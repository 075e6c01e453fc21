/** Reads a stream of typed events in a test: up to a matching event, or to the end. */
export class EventReader<E extends { type: string }> {
  private readonly iterator: AsyncIterator<E>;

  constructor(events: AsyncIterable<E>) {
    this.iterator = events[Symbol.asyncIterator]();
  }

  /** The events up to and including the first of type `type` (and matching `match`). */
  async until(type: E["type"], match: (event: E) => boolean = () => true): Promise<E[]> {
    const events: E[] = [];
    for (;;) {
      const next = await this.iterator.next();
      if (next.done) {
        throw new Error(
          `events ended before a ${type} event; got ${JSON.stringify(events.map((e) => e.type))}`,
        );
      }
      events.push(next.value);
      if (next.value.type === type && match(next.value)) return events;
    }
  }

  /** Every event until the stream ends. */
  async rest(): Promise<E[]> {
    const events: E[] = [];
    for (;;) {
      const next = await this.iterator.next();
      if (next.done) return events;
      events.push(next.value);
    }
  }
}

/** Events without their error objects, for comparing sequences. */
export function shapes<E extends { type: string }>(events: E[]): unknown[] {
  return events.map((event) => {
    if (event.type !== "error") return event;
    const error = (event as unknown as { error: { kind: string } }).error;
    return { type: "error", kind: error.kind };
  });
}
