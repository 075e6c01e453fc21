import type { IncomingMessage } from "node:http";
import WebSocket from "ws";
import { AsyncQueue } from "../async-queue.js";
import { SampleAligner } from "../audio/pcm.js";
import { kindForStatus } from "../http-errors.js";
import { ProviderError } from "../types.js";
import { errorFromClose, kindFromText } from "./ws-errors.js";

/**
 * The transport every streaming speech client shares: one WebSocket per synthesis, the vendor's
 * protocol plugged in as a starter (what to send once open) and a frame reader (what a server frame
 * means). Audio is yielded as it arrives, re-cut to whole 16-bit samples.
 *
 * Aborting the signal closes the socket and ends the iteration quietly (the caller asked for it);
 * every failure — refused upgrade, error frame, malformed frame, premature close — is thrown as a
 * ProviderError after the audio that came before it.
 */

export interface SocketOptions {
  provider: string;
  url: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Upgrade handshake timeout; default 10 s. */
  connectTimeoutMs?: number;
  /** A provider silent this long once connected is given up on; default 15 s. */
  idleTimeoutMs?: number;
}

/** What one server frame meant: audio, the end of the stream, both, or nothing (undefined). */
export interface FrameResult {
  audio?: Uint8Array;
  done?: boolean;
}

export interface StreamProtocol {
  /** Sends the request on the freshly opened socket. */
  start(send: (frame: string | Uint8Array) => void): void;
  /** Interprets one server frame; throws a ProviderError for error frames and malformed ones. */
  onFrame(data: Buffer, isBinary: boolean): FrameResult | undefined;
}

const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export async function* streamPcm(
  options: SocketOptions,
  protocol: StreamProtocol,
): AsyncGenerator<Uint8Array> {
  const { provider, signal } = options;
  if (signal?.aborted) return;
  const queue = new AsyncQueue<Uint8Array>();
  const aligner = new SampleAligner();
  // Every handler is attached before the handshake: a frame or close that follows the upgrade at
  // once (an error answer, typically) cannot slip past.
  const ws = new WebSocket(options.url, {
    headers: options.headers,
    handshakeTimeout: options.connectTimeoutMs ?? 10_000,
    maxPayload: MAX_FRAME_BYTES,
  });
  let opened = false;
  let settled = false;
  const idleMs = options.idleTimeoutMs ?? 15_000;
  let idleTimer: NodeJS.Timeout | undefined;
  const awaitNextFrame = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(
      () => settle(new ProviderError(provider, `no answer for ${idleMs} ms`, "unavailable")),
      idleMs,
    );
  };
  const settle = (error?: ProviderError) => {
    if (settled) return;
    settled = true;
    clearTimeout(idleTimer);
    signal?.removeEventListener("abort", onAbort);
    if (error) queue.fail(error);
    else queue.end();
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  };
  const onAbort = () => settle();
  signal?.addEventListener("abort", onAbort, { once: true });

  ws.on("open", () => {
    opened = true;
    awaitNextFrame();
    try {
      protocol.start((frame) => ws.send(frame));
    } catch (err) {
      settle(asProviderError(provider, err));
    }
  });
  ws.on("unexpected-response", (_request, response) => {
    readBody(response).then((body) => settle(refused(provider, response.statusCode ?? 0, body)));
  });
  ws.on("message", (data, isBinary) => {
    if (settled) return;
    awaitNextFrame();
    let result: FrameResult | undefined;
    try {
      result = protocol.onFrame(toBuffer(data), isBinary);
    } catch (err) {
      // An error answer or a malformed frame: nothing more is wanted from this socket.
      return settle(asProviderError(provider, err));
    }
    if (result?.audio && result.audio.length > 0) {
      const aligned = aligner.push(result.audio);
      if (aligned.length > 0) queue.push(aligned);
    }
    if (result?.done) settle();
  });
  ws.on("close", (code, reason) =>
    settle(
      opened
        ? errorFromClose(provider, code, reason.toString())
        : new ProviderError(provider, "connection closed during the handshake", "unavailable"),
    ),
  );
  ws.on("error", (err) => {
    const what = opened ? "socket error" : "cannot connect";
    settle(new ProviderError(provider, `${what}: ${err.message}`, "unavailable", { cause: err }));
  });

  try {
    for await (const chunk of queue) yield chunk;
  } finally {
    // The consumer stopped early (break/return) or everything is done: the socket goes either way.
    settle();
  }
}

function refused(provider: string, status: number, body: string): ProviderError {
  const message = `upgrade refused with HTTP ${status}${body ? `: ${body}` : ""}`;
  const kind = status === 429 ? "rate_limited" : kindFromText(body, kindForStatus(status));
  return new ProviderError(provider, message, kind);
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    const timer = setTimeout(() => resolve(body.trim()), 1_000);
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      if (body.length < 2_000) body += chunk;
    });
    const end = () => {
      clearTimeout(timer);
      resolve(body.trim().slice(0, 2_000));
    };
    response.on("end", end);
    response.on("error", end);
  });
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function asProviderError(provider: string, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError(provider, err instanceof Error ? err.message : String(err), "unavailable", {
    cause: err,
  });
}

/** Strict base64 (the lenient decoder would turn garbage into noise). */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64");
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A ws(s) URL from a base that may be given as http(s). */
export function socketUrl(baseUrl: string, path: string, query?: Record<string, string | undefined>): string {
  const url = new URL(baseUrl.replace(/\/+$/, "") + path);
  if (url.protocol === "http:") url.protocol = "ws:";
  if (url.protocol === "https:") url.protocol = "wss:";
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, value);
  }
  return url.toString();
}
