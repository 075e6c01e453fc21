/**
 * A local peer for the chat-completions protocol, for tests. It checks each request the way the real
 * endpoints do (path, method, Bearer key, JSON body schema, unknown fields refused), records it, and
 * answers with a streamed completion (role chunk, content chunks, finish chunk, `[DONE]`) or with the
 * failure the test queued: an HTTP status with the vendor's JSON error body, a malformed chunk, an error
 * inside the stream, a stream that hangs or is cut, or no answer at all.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ErrorObject {
  message: string;
  type: string;
  code: string | null;
}

export type ChatBehaviour =
  /** Streams `pieces` as content chunks; with a gate, waits for it after the first piece. */
  | { kind: "stream"; pieces: string[]; gate?: Promise<void>; finish?: boolean; done?: boolean }
  | { kind: "status"; status: number; retryAfter?: string; error?: ErrorObject }
  | { kind: "malformed"; after: string[] }
  | { kind: "stream-error"; after: string[]; error: ErrorObject }
  /** Streams `after`, then keeps the response open until the client goes away. */
  | { kind: "hang"; after: string[] }
  /** Streams `after`, then destroys the connection. */
  | { kind: "cut"; after: string[] }
  /** Never answers. */
  | { kind: "silent" }
  /** Answers as if `stream` had been false. */
  | { kind: "json"; content: string };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown> | undefined;
  /** Resolves when the client closes the connection before the answer is complete. */
  clientClosed: Promise<void>;
}

const ROLES = new Set(["system", "user", "assistant", "developer"]);
const FIELDS = new Set([
  "model",
  "messages",
  "stream",
  "temperature",
  "max_tokens",
  "max_completion_tokens",
  "stream_options",
]);

export class ChatCompletionsServer {
  readonly requests: RecordedRequest[] = [];
  /** Protocol violations by the client, in the server's words. */
  readonly violations: string[] = [];
  private readonly queue: ChatBehaviour[] = [];
  private sequence = 0;

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
  ) {}

  /** `apiKey` undefined: no key required, as local servers do. */
  static async start(options: { apiKey?: string } = {}): Promise<ChatCompletionsServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const peer = new ChatCompletionsServer(server, `http://127.0.0.1:${port}/v1`, options.apiKey);
    server.on("request", (req, res) => void peer.serve(req, res));
    return peer;
  }

  /** The behaviour for the next request (default: a short completion). */
  enqueue(behaviour: ChatBehaviour): void {
    this.queue.push(behaviour);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const closed = new Promise<void>((resolve) => res.on("close", () => !res.writableFinished && resolve()));
    const record: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body: undefined,
      clientClosed: closed,
    };
    this.requests.push(record);
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      return this.refuse(res, 404, invalid(`Unknown request URL: ${req.method} ${req.url}`, "unknown_url"));
    }
    if (this.apiKey !== undefined && req.headers.authorization !== `Bearer ${this.apiKey}`) {
      return this.refuse(res, 401, invalid("Incorrect API key provided.", "invalid_api_key"));
    }
    if (!String(req.headers["content-type"]).startsWith("application/json")) {
      return this.refuse(res, 400, invalid("Content-Type must be application/json", null));
    }
    try {
      record.body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return this.refuse(res, 400, invalid("We could not parse the JSON body of your request.", null));
    }
    const problem = checkBody(record.body);
    if (problem) return this.refuse(res, 400, invalid(problem, null));
    await this.answer(res, this.queue.shift() ?? { kind: "stream", pieces: ["Hello", "!"] }, record.body);
  }

  private refuse(res: ServerResponse, status: number, error: ErrorObject): void {
    this.violations.push(`${status} ${error.message}`);
    sendError(res, status, error);
  }

  private async answer(
    res: ServerResponse,
    behaviour: ChatBehaviour,
    body: Record<string, unknown>,
  ): Promise<void> {
    const id = `chatcmpl-${++this.sequence}`;
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      })}\n\n`;
    const open = () => {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
      res.write(chunk({ role: "assistant", content: "" }));
    };
    switch (behaviour.kind) {
      case "status":
        if (behaviour.retryAfter) res.setHeader("retry-after", behaviour.retryAfter);
        return sendError(res, behaviour.status, behaviour.error ?? defaultError(behaviour.status));
      case "silent":
        return;
      case "json":
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id,
            object: "chat.completion",
            choices: [{ message: { content: behaviour.content } }],
          }),
        );
        return;
      case "stream": {
        open();
        const [first, ...rest] = behaviour.pieces;
        if (first !== undefined) res.write(chunk({ content: first }));
        await behaviour.gate;
        for (const piece of rest) res.write(chunk({ content: piece }));
        if (behaviour.finish !== false) res.write(chunk({}, "stop"));
        if (behaviour.done !== false) res.write("data: [DONE]\n\n");
        res.end();
        return;
      }
      default: {
        open();
        for (const piece of behaviour.after) res.write(chunk({ content: piece }));
        if (behaviour.kind === "malformed") res.end('data: {"id": "chatcmpl-x", "choices": [\n\n');
        if (behaviour.kind === "stream-error")
          res.end(`data: ${JSON.stringify({ error: behaviour.error })}\n\n`);
        if (behaviour.kind === "cut") res.socket?.destroy();
      }
    }
  }
}

function checkBody(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return "The body must be a JSON object.";
  const b = body as Record<string, unknown>;
  for (const field of Object.keys(b))
    if (!FIELDS.has(field)) return `Unrecognized request argument supplied: ${field}`;
  if (typeof b.model !== "string" || b.model === "") return "you must provide a model parameter";
  if (!Array.isArray(b.messages) || b.messages.length === 0) return "'messages' must be a non-empty array";
  for (const m of b.messages as { role?: unknown; content?: unknown }[]) {
    if (!ROLES.has(String(m?.role))) return `Invalid value for 'messages.role': ${String(m?.role)}`;
    if (typeof m.content !== "string") return "Invalid type for 'messages.content': expected a string";
  }
  if (b.stream !== true) return "this test server only streams: 'stream' must be true";
  if (
    b.temperature !== undefined &&
    !(typeof b.temperature === "number" && b.temperature >= 0 && b.temperature <= 2)
  ) {
    return "Invalid 'temperature': must be a number from 0 to 2";
  }
  for (const field of ["max_tokens", "max_completion_tokens"]) {
    const value = b[field];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) > 0))
      return `Invalid '${field}'`;
  }
  return undefined;
}

function invalid(message: string, code: string | null): ErrorObject {
  return { message, type: "invalid_request_error", code };
}

function defaultError(status: number): ErrorObject {
  if (status === 429)
    return { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" };
  if (status >= 500)
    return {
      message: "The server had an error while processing your request.",
      type: "server_error",
      code: null,
    };
  return invalid(`HTTP ${status}`, null);
}

function sendError(res: ServerResponse, status: number, error: ErrorObject): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { ...error, param: null } }));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const piece of req) pieces.push(piece as Buffer);
  return Buffer.concat(pieces).toString("utf8");
}
