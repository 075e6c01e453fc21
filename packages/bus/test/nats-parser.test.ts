import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * nats-core's protocol parser as patched (patches/@nats-io__nats-core@3.3.1.patch): a payload that a
 * socket read does not hold whole is gathered in a buffer of its own size. Fed here read by read, with
 * the reads ending at the places a socket may end them.
 */
const fromTransport = createRequire(createRequire(import.meta.url).resolve("@nats-io/transport-node"));
const { Parser, Kind } = fromTransport(
  path.join(path.dirname(fromTransport.resolve("@nats-io/nats-core")), "parser.js"),
) as {
  Parser: new (dispatcher: { push(event: ParserEvent): void }) => { parse(buf: Uint8Array): void };
  Kind: { MSG: number; PING: number };
};

interface ParserEvent {
  kind: number;
  msg?: { subject: Uint8Array; size: number };
  data?: Uint8Array;
}

const bytes = (s: string) => new TextEncoder().encode(s);
const payload = (size: number) => new Uint8Array(size).map((_, i) => (i * 7) % 251);
const frame = (subject: string, body: Uint8Array) =>
  Buffer.concat([bytes(`MSG ${subject} 1 ${body.length}\r\n`), body, bytes("\r\n")]);

/** Parses `stream` in reads ending at `cuts` (offsets into it); answers what the parser dispatched. */
function parseInReads(stream: Uint8Array, cuts: number[]): ParserEvent[] {
  const events: ParserEvent[] = [];
  const parser = new Parser({ push: (e) => events.push(e) });
  let from = 0;
  // Each read is a copy, as a socket's would be: nothing may point into a buffer reused later.
  for (const to of [...cuts, stream.length]) {
    parser.parse(Uint8Array.from(stream.subarray(from, to)));
    from = to;
  }
  return events;
}

describe("the patched NATS parser", () => {
  const body = payload(5_000);
  const msg = frame("a.b", body);
  const bodyStart = msg.length - body.length - 2;
  const bodyEnd = msg.length - 2;

  it.each([
    ["the payload ends exactly at a read's end, its CRLF in the next", [bodyEnd]],
    ["a read ends between the CR and the LF", [bodyEnd + 1]],
    ["the payload is spread over three reads", [bodyStart + 10, bodyStart + 2_500]],
    ["a read ends with the MSG line, the payload all in the next", [bodyStart]],
    ["a read ends one byte into the payload and one byte before its end", [bodyStart + 1, bodyEnd - 1]],
  ])("gathers the payload whole when %s, in a buffer of its size", (_what, cuts) => {
    const stream = Buffer.concat([msg, bytes("PING\r\n")]);
    const events = parseInReads(stream, cuts);
    expect(events.map((e) => e.kind)).toEqual([Kind.MSG, Kind.PING]);
    const data = events[0]?.data as Uint8Array;
    expect(Buffer.from(data).equals(Buffer.from(body))).toBe(true);
    if (cuts.some((c) => c > bodyStart && c <= bodyEnd)) expect(data.buffer.byteLength).toBe(body.length);
  });

  it("parses a message that follows a split one in the same read", () => {
    const second = payload(300).reverse();
    const stream = Buffer.concat([msg, frame("c.d", second)]);
    const events = parseInReads(stream, [bodyStart + 100]);
    expect(events.map((e) => new TextDecoder().decode(e.msg?.subject))).toEqual(["a.b", "c.d"]);
    expect(Buffer.from(events[0]?.data as Uint8Array).equals(Buffer.from(body))).toBe(true);
    expect(Buffer.from(events[1]?.data as Uint8Array).equals(Buffer.from(second))).toBe(true);
  });

  it("gives an empty payload whose MSG line ends a read", () => {
    const stream = Buffer.concat([frame("e.f", new Uint8Array()), bytes("PING\r\n")]);
    const events = parseInReads(stream, [stream.indexOf(bytes("\r\n")) + 2]);
    expect(events.map((e) => [e.kind, e.data?.length])).toEqual([
      [Kind.MSG, 0],
      [Kind.PING, undefined],
    ]);
  });
});
