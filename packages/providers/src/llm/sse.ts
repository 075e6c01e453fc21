/**
 * A parser for server-sent events (the WHATWG `text/event-stream` format): lines ending in CR, LF or
 * CRLF, `field: value` lines, `:` comments, events dispatched on a blank line, multi-line `data` joined
 * with "\n". Feed it text in arbitrary pieces; it keeps what is incomplete.
 */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private id: string | undefined;

  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      // A CR at the very end may be the first half of a CRLF: wait for more text.
      if (ch === "\r" && i === this.buffer.length - 1) break;
      const line = this.buffer.slice(start, i);
      if (ch === "\r" && this.buffer[i + 1] === "\n") i++;
      start = i + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id") this.id = value;
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const data = this.data;
    const event = this.event || "message";
    this.data = [];
    this.event = "";
    if (data.length === 0) return undefined;
    return this.id === undefined
      ? { event, data: data.join("\n") }
      : { event, data: data.join("\n"), id: this.id };
  }
}

/**
 * Decodes a byte stream as UTF-8 (characters split across chunks included) and yields its events.
 * `onChunk` runs for every chunk read, comments and keep-alives included (idle timers use it).
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  onChunk?: () => void,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  const parser = new SseParser();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onChunk?.();
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    finished = true;
    // An event not closed by a blank line at the end of the stream is dropped, as the format says.
    parser.push(decoder.decode());
  } finally {
    // The consumer stopped early or reading failed: cancel the body so the connection is released.
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
