import type { IncomingHttpHeaders } from "node:http";
import { decodeMsgpack, encodeMsgpack, type MsgpackValue } from "../../src/encoding/msgpack.js";
import { type Connection, TtsPeer } from "./tts-peer.js";

/**
 * A protocol peer for vendorE's live WebSocket (MessagePack frames). Checks the Bearer key and the
 * `model` header at the upgrade (refusing with 401 / 400 like the vendor), then the events: start
 * (text "", format pcm, sample_rate 24000, reference_id, latency, prosody.speed) first, text events,
 * flush, and stop last. After stop it streams {event: "audio", audio: <bin>} frames, then
 * {event: "finish", reason: "stop"} and closes; after the first chunk comes an event unknown to clients.
 * Bad requests get {event: "finish", reason: "error"}.
 */

const MODELS = ["s1", "s2", "s2-pro", "s2.1-pro"];
const LATENCIES = ["normal", "balanced", "low"];
const START_FIELDS = new Set([
  "text",
  "format",
  "sample_rate",
  "reference_id",
  "latency",
  "prosody",
  "chunk_length",
  "normalize",
]);

export class VendorETtsServer extends TtsPeer {
  private readonly phase = new WeakMap<Connection, "new" | "started" | "stopped">();

  protected checkUpgrade(_url: URL, headers: IncomingHttpHeaders) {
    if (_url.pathname !== "/v1/tts/live") return { status: 404, body: '{"message":"Not Found"}' };
    if (headers.authorization !== `Bearer ${this.options.apiKey}`)
      return { status: 401, body: '{"status":401,"message":"Invalid API key"}' };
    if (!MODELS.includes(String(headers.model)))
      return { status: 400, body: '{"status":400,"message":"Unknown model"}' };
    return undefined;
  }

  protected override onOpen(connection: Connection): void {
    this.phase.set(connection, "new");
  }

  protected answerViolation(connection: Connection, what: string): void {
    connection.socket.send(encodeMsgpack({ event: "finish", reason: "error", message: what }));
    connection.socket.close(1000);
  }

  protected onFrame(connection: Connection, data: Buffer, isBinary: boolean): void {
    const phase = this.phase.get(connection);
    if (!phase) return;
    if (!isBinary) {
      this.violation(connection, "text frame");
      return;
    }
    let event: MsgpackValue;
    try {
      event = decodeMsgpack(data);
    } catch {
      this.violation(connection, "frame is not MessagePack");
      return;
    }
    connection.messages.push(event);
    if (typeof event !== "object" || event === null || Array.isArray(event) || event instanceof Uint8Array) {
      this.violation(connection, "event must be a map");
      return;
    }
    if (phase === "stopped") {
      this.violation(connection, "event after stop");
      return;
    }
    if (phase === "new") {
      if (event.event !== "start") {
        this.violation(connection, "the first event must be start");
        return;
      }
      const problem = checkStart(event.request);
      if (problem) {
        this.violation(connection, problem);
        return;
      }
      this.phase.set(connection, "started");
      return;
    }
    if (event.event === "text") {
      if (typeof event.text !== "string") this.violation(connection, "text must be a string");
    } else if (event.event === "stop") {
      this.phase.set(connection, "stopped");
      void this.finish(connection);
    } else if (event.event !== "flush") {
      this.violation(connection, `unexpected event ${String(event.event)}`);
    }
  }

  private async finish(connection: Connection): Promise<void> {
    let sent = 0;
    const complete = await this.streamAudio(connection, (chunk) => {
      connection.socket.send(encodeMsgpack({ event: "audio", audio: chunk }));
      // An event this client does not know: the protocol says to ignore those.
      if (sent++ === 0) connection.socket.send(encodeMsgpack({ event: "log", message: "chunk sent" }));
    });
    if (!complete) return;
    connection.socket.send(encodeMsgpack({ event: "finish", reason: "stop" }));
    connection.socket.close(1000);
  }
}

function checkStart(request: MsgpackValue | undefined): string | undefined {
  if (
    typeof request !== "object" ||
    request === null ||
    Array.isArray(request) ||
    request instanceof Uint8Array
  ) {
    return "start needs a request map";
  }
  for (const key of Object.keys(request)) if (!START_FIELDS.has(key)) return `unknown request field ${key}`;
  if (request.text !== "") return "request.text must be empty in live mode";
  if (request.format !== "pcm") return "format must be pcm";
  if (request.sample_rate !== 24000) return "sample_rate must be 24000";
  if (typeof request.reference_id !== "string" || !request.reference_id)
    return "reference_id must be a string";
  if (!LATENCIES.includes(String(request.latency))) return "invalid latency";
  const prosody = request.prosody as { [key: string]: MsgpackValue } | undefined;
  if (
    prosody !== undefined &&
    (typeof prosody.speed !== "number" || prosody.speed < 0.5 || prosody.speed > 2)
  ) {
    return "prosody.speed must be 0.5..2";
  }
  return undefined;
}
