import { createServer } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChatCompletionsModel, type ChatCompletionsOptions } from "../src/llm/chat-completions.js";
import { type ChatRequest, ProviderError } from "../src/types.js";
import { ChatCompletionsServer } from "./servers/chat-completions-server.js";

const KEY = "sk-test-123";
const REQUEST: ChatRequest = {
  model: "gpt-5.4-nano",
  messages: [
    { role: "system", content: "You are a helpful avatar." },
    { role: "user", content: "Hi there" },
  ],
};

let server: ChatCompletionsServer;

beforeEach(async () => {
  server = await ChatCompletionsServer.start({ apiKey: KEY });
});
afterEach(async () => {
  await server.close();
});

function model(options: Partial<ChatCompletionsOptions> = {}): ChatCompletionsModel {
  return new ChatCompletionsModel({ baseUrl: server.baseUrl, apiKey: KEY, name: "vendorB", ...options });
}

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const pieces: string[] = [];
  for await (const piece of stream) pieces.push(piece);
  return pieces;
}

async function failure(stream: AsyncIterable<string>): Promise<ProviderError> {
  const error = await collect(stream).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("ChatCompletionsModel", () => {
  it("posts the exact streaming request and yields the content pieces in order", async () => {
    server.enqueue({ kind: "stream", pieces: ["Hel", "lo", " wörld ✓"] });
    const pieces = await collect(model().stream({ ...REQUEST, temperature: 0.7, maxTokens: 50 }));

    expect(pieces).toEqual(["Hel", "lo", " wörld ✓"]);
    expect(server.violations).toEqual([]);
    const [request] = server.requests;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.headers.accept).toBe("text/event-stream");
    expect(request?.body).toEqual({ ...REQUEST, stream: true, temperature: 0.7, max_tokens: 50 });
  });

  it("sends no key to a server that needs none, and the reasoning models' length field when asked", async () => {
    const local = await ChatCompletionsServer.start();
    try {
      const client = new ChatCompletionsModel({
        baseUrl: `${local.baseUrl}/`,
        maxTokensField: "max_completion_tokens",
      });
      expect(await collect(client.stream({ ...REQUEST, maxTokens: 20 }))).toEqual(["Hello", "!"]);
      expect(local.requests[0]?.headers.authorization).toBeUndefined();
      expect(local.requests[0]?.body).toEqual({ ...REQUEST, stream: true, max_completion_tokens: 20 });
      expect(client.name).toBe("chat-completions");
    } finally {
      await local.close();
    }
  });

  it("hands out each piece as it arrives, before the rest of the answer exists", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.enqueue({ kind: "stream", pieces: ["first", "second", "third"], gate });
    const iterator = model().stream(REQUEST)[Symbol.asyncIterator]();

    // The server holds everything after the first piece until released: a buffering client would hang here.
    expect(await iterator.next()).toEqual({ value: "first", done: false });
    release();
    expect(await iterator.next()).toEqual({ value: "second", done: false });
    expect(await iterator.next()).toEqual({ value: "third", done: false });
    expect((await iterator.next()).done).toBe(true);
  });

  it("stops the request when the signal is aborted mid-stream, and the server sees the connection close", async () => {
    server.enqueue({ kind: "hang", after: ["partial"] });
    const controller = new AbortController();
    const seen: string[] = [];
    const reason = new Error("user barged in");
    const outcome = (async () => {
      for await (const piece of model().stream(REQUEST, controller.signal)) {
        seen.push(piece);
        controller.abort(reason);
      }
    })();

    await expect(outcome).rejects.toBe(reason);
    expect(seen).toEqual(["partial"]);
    await server.requests[0]?.clientClosed;
  });

  it("closes the connection when the consumer leaves the loop early", async () => {
    server.enqueue({ kind: "hang", after: ["one", "two"] });
    for await (const piece of model().stream(REQUEST)) {
      expect(piece).toBe("one");
      break;
    }
    await server.requests[0]?.clientClosed;
  });

  it("refuses to start with an already aborted signal", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(collect(model().stream(REQUEST, controller.signal))).rejects.toThrow(/abort/i);
    expect(server.requests).toHaveLength(0);
  });

  it("maps a wrong key, checked by the server, to unauthorized", async () => {
    const error = await failure(model({ apiKey: "sk-wrong" }).stream(REQUEST));
    expect(error.kind).toBe("unauthorized");
    expect(error.provider).toBe("vendorB");
    expect(error.message).toContain("HTTP 401");
    expect(error.message).toContain("Incorrect API key provided.");
  });

  it.each([
    [403, "unauthorized"],
    [400, "bad_request"],
    [404, "bad_request"],
    [422, "bad_request"],
    [500, "unavailable"],
    [503, "unavailable"],
  ] as const)("maps HTTP %i to %s", async (status, kind) => {
    server.enqueue({ kind: "status", status });
    const error = await failure(model().stream(REQUEST));
    expect(error.kind).toBe(kind);
    expect(error.message).toContain(`HTTP ${status}`);
  });

  it("maps HTTP 429 to rate_limited and tells how long to wait", async () => {
    server.enqueue({ kind: "status", status: 429, retryAfter: "7" });
    const error = await failure(model().stream(REQUEST));
    expect(error.kind).toBe("rate_limited");
    expect(error.message).toContain("Rate limit reached for requests");
    expect(error.message).toContain("retry after 7 s");
  });

  it("reads a Retry-After given as a date", async () => {
    server.enqueue({ kind: "status", status: 429, retryAfter: new Date(Date.now() + 120_000).toUTCString() });
    const error = await failure(model().stream(REQUEST));
    expect(error.message).toMatch(/retry after 1[12]\d s/);
  });

  it("reports a request the server refuses as a bad request, in the server's words", async () => {
    const error = await failure(model().stream({ ...REQUEST, temperature: 5 }));
    expect(error.kind).toBe("bad_request");
    expect(error.message).toContain("Invalid 'temperature'");
  });

  it("maps a refused connection to unavailable", async () => {
    const port = await freePort();
    const client = new ChatCompletionsModel({ baseUrl: `http://127.0.0.1:${port}/v1`, name: "local" });
    const error = await failure(client.stream(REQUEST));
    expect(error.kind).toBe("unavailable");
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("fails on a malformed chunk after yielding what came before it", async () => {
    server.enqueue({ kind: "malformed", after: ["ok so far"] });
    const seen: string[] = [];
    const error = await failure(
      (async function* () {
        for await (const piece of model().stream(REQUEST)) {
          seen.push(piece);
          yield piece;
        }
      })(),
    );
    expect(seen).toEqual(["ok so far"]);
    expect(error.kind).toBe("unavailable");
    expect(error.message).toContain("malformed stream chunk");
  });

  it("maps an error object inside the stream by its code", async () => {
    server.enqueue({
      kind: "stream-error",
      after: [],
      error: { message: "Rate limit reached for tokens", type: "tokens", code: "rate_limit_exceeded" },
    });
    const error = await failure(model().stream(REQUEST));
    expect(error.kind).toBe("rate_limited");
    expect(error.message).toContain("Rate limit reached for tokens");
  });

  it("fails when the connection is cut mid-stream", async () => {
    server.enqueue({ kind: "cut", after: ["half"] });
    const error = await failure(model().stream(REQUEST));
    expect(error.kind).toBe("unavailable");
  });

  it("accepts a stream that finished without [DONE] but not one that just stopped", async () => {
    server.enqueue({ kind: "stream", pieces: ["a", "b"], done: false });
    expect(await collect(model().stream(REQUEST))).toEqual(["a", "b"]);

    server.enqueue({ kind: "stream", pieces: ["a", "b"], done: false, finish: false });
    const error = await failure(model().stream(REQUEST));
    expect(error.message).toContain("ended before the answer did");
  });

  it("refuses an answer that is not an event stream", async () => {
    server.enqueue({ kind: "json", content: "whole answer" });
    const error = await failure(model().stream(REQUEST));
    expect(error.message).toContain("expected an event stream");
  });

  it("does not count a slow consumer against the idle timeout", async () => {
    let release!: () => void;
    const consumerDone = new Promise<void>((resolve) => {
      release = resolve;
    });
    const client = model({ idleTimeoutMs: 100 });
    // The server sends the rest only once the consumer is done: the connection stays open meanwhile.
    server.enqueue({ kind: "stream", pieces: ["slow", "consumer"], gate: consumerDone });
    const pieces: string[] = [];
    for await (const piece of client.stream(REQUEST)) {
      pieces.push(piece);
      // Hold the first piece well past the idle timeout (a timer, not a sleep: the outcome does not hinge on it).
      if (pieces.length === 1) {
        setTimeout(release, 300);
        await consumerDone;
      }
    }
    expect(pieces).toEqual(["slow", "consumer"]);
  });

  it("times out when no answer comes, and when the stream goes idle", async () => {
    server.enqueue({ kind: "silent" });
    const silent = await failure(model({ timeoutMs: 150 }).stream(REQUEST));
    expect(silent.kind).toBe("unavailable");
    expect(silent.message).toContain("no response within 150 ms");
    await server.requests[0]?.clientClosed;

    server.enqueue({ kind: "hang", after: ["started"] });
    const idle = await failure(model({ idleTimeoutMs: 150 }).stream(REQUEST));
    expect(idle.message).toContain("stream idle for 150 ms");
    await server.requests[1]?.clientClosed;
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
