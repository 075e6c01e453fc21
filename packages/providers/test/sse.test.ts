import { describe, expect, it } from "vitest";
import { readSse, type SseEvent, SseParser } from "../src/llm/sse.js";

const STREAM =
  ": keep-alive comment\r\n\r\n" +
  'data: {"a":1}\n\n' +
  "event: note\r\ndata: first line\r\ndata:second line\r\nid: 7\r\n\r\n" +
  "data: héllo wörld ✓\r\r" +
  "data: [DONE]\n\n" +
  "data: never dispatched";

const EXPECTED: SseEvent[] = [
  { event: "message", data: '{"a":1}' },
  { event: "note", data: "first line\nsecond line", id: "7" },
  { event: "message", data: "héllo wörld ✓", id: "7" },
  { event: "message", data: "[DONE]", id: "7" },
];

function streamOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  });
}

describe("server-sent events", () => {
  it("parses CR, LF and CRLF lines, comments, named and multi-line events", () => {
    expect(new SseParser().push(STREAM)).toEqual(EXPECTED);
  });

  it("gives the same events wherever the text is cut", () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(STREAM.slice(0, cut)), ...parser.push(STREAM.slice(cut))];
      expect(events, `cut at ${cut}`).toEqual(EXPECTED);
    }
  });

  it("decodes UTF-8 characters split across network chunks", async () => {
    const bytes = new TextEncoder().encode(STREAM);
    for (let cut = 1; cut < bytes.length; cut += 3) {
      const events: SseEvent[] = [];
      for await (const event of readSse(streamOf([bytes.slice(0, cut), bytes.slice(cut)])))
        events.push(event);
      expect(events, `cut at byte ${cut}`).toEqual(EXPECTED);
    }
  });
});
