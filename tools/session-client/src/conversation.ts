import type { RecordingSummary } from "@avatar/media";
import { EventSocket, type ReceivedEvent } from "./event-socket.js";
import { SessionRecording } from "./recording.js";
import { tone } from "./tone.js";

export interface ConversationOptions {
  baseUrl: string;
  apiKey: string;
  mode: "LITE" | "FULL";
  /** Without one, the first listed avatar the token endpoint accepts for this mode and sandbox flag. */
  avatarId?: string;
  sandbox: boolean;
  /** What the avatar says in FULL mode (avatar.repeat), or with `say` what it answers. */
  text: string;
  /**
   * FULL mode: the text goes to the avatar's language model (avatar.say, as a message typed on the
   * embed page) and the avatar speaks the answer, instead of repeating the text.
   */
  say?: boolean;
  print: (line: string) => void;
  /** Watch the session over WHEP and record what a viewer receives to this file (.mkv / .webm). */
  record?: string;
}

export interface ConversationReport {
  sessionId: string;
  /** speak_started -> speak_ended of the spoken utterance, and the audio's own length. */
  playedMs: number;
  audioMs: number | undefined;
  interrupted: boolean | undefined;
  stoppedWith: string;
  closeCode: number;
  recording?: RecordingSummary;
}

interface Envelope {
  code: number;
  // biome-ignore lint/suspicious/noExplicitAny: the data of an envelope is endpoint specific
  data: any;
  message?: string;
}

/**
 * One session as a customer runs it: mint a token with the API key, start with the token, speak over the
 * event socket, stop. Every event is printed with its arrival time since the socket opened.
 */
export async function runConversation(options: ConversationOptions): Promise<ConversationReport> {
  // Before anything is minted: a LITE session has no language model to answer.
  if (options.say && options.mode !== "FULL")
    throw new Error("say needs FULL mode (a LITE avatar has no model)");
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(new URL(path, options.baseUrl), {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Envelope };
  };
  const apiKey = { "X-API-KEY": options.apiKey };

  const minted = await mint(options, call, apiKey);
  const bearer = { Authorization: `Bearer ${minted.session_token}` };
  options.print(`session ${minted.session_id} (${options.mode}${options.sandbox ? ", sandbox" : ""})`);
  const started = await call("POST", "/v1/sessions/start", bearer);
  if (started.status !== 201)
    throw new Error(`start: HTTP ${started.status} ${JSON.stringify(started.body)}`);

  const t0 = performance.now();
  const socket = await EventSocket.open(started.body.data.ws_url, t0, (e) => options.print(describe(e)));
  await socket.next("session.state_updated", (e) => e.state === "connected");
  const recording = options.record
    ? await SessionRecording.start(options.baseUrl, minted.session_id, minted.session_token, options.record)
    : undefined;
  if (recording) options.print(`watching over WHEP, recording to ${options.record}`);

  const spoken =
    options.mode === "LITE" ? await speakLite(socket) : await speakFull(socket, options.text, options.say);
  if (options.mode === "LITE") await interruptLite(socket);
  const recorded = await recording?.stop();
  if (recorded) {
    options.print(
      `recorded ${recorded.videoFrames} video frames and ${recorded.audioPackets} audio packets ` +
        `(${recorded.durationMs} ms) to ${recorded.path}`,
    );
  }

  const stopped = await call("POST", "/v1/sessions/stop", bearer);
  if (stopped.status !== 200) throw new Error(`stop: HTTP ${stopped.status} ${JSON.stringify(stopped.body)}`);
  const stoppedEvent = await socket.next("session.stopped");
  const closed = await socket.closed;
  options.print(`closed ${closed.code}`);
  return {
    sessionId: minted.session_id,
    ...spoken,
    stoppedWith: stoppedEvent.end_reason,
    closeCode: closed.code,
    ...(recorded ? { recording: recorded } : {}),
  };
}

type Call = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) => Promise<{ status: number; body: Envelope }>;

async function mint(
  options: ConversationOptions,
  call: Call,
  apiKey: Record<string, string>,
): Promise<{ session_id: string; session_token: string }> {
  let candidates = options.avatarId ? [options.avatarId] : [];
  if (candidates.length === 0) {
    const listed = await call("GET", "/v1/avatars?page_size=100", apiKey);
    if (listed.status !== 200)
      throw new Error(`avatars: HTTP ${listed.status} ${JSON.stringify(listed.body)}`);
    candidates = (listed.body.data.results as { id: string }[]).map((a) => a.id);
  }
  let last = "no avatar";
  for (const avatar_id of candidates) {
    const body = { mode: options.mode, avatar_id, is_sandbox: options.sandbox };
    const res = await call("POST", "/v1/sessions/token", apiKey, body);
    if (res.status === 200) return res.body.data;
    last = `HTTP ${res.status} ${res.body.message ?? JSON.stringify(res.body)}`;
    // Only "this avatar does not do that" (400) moves on to the next avatar.
    if (options.avatarId || res.status !== 400) break;
  }
  throw new Error(`token: ${last}`);
}

/** Two seconds of audio in four chunks, the end of the utterance, and its playout. */
async function speakLite(socket: EventSocket) {
  const chunk = tone(500).toString("base64");
  for (let i = 0; i < 3; i++) socket.send({ type: "agent.speak", event_id: `chunk-${i}`, audio: chunk });
  socket.send({ type: "agent.speak_end", event_id: "utterance-1", audio: chunk });
  const started = await socket.next("agent.speak_started");
  const ended = await socket.next("agent.speak_ended");
  return { playedMs: ended.atMs - started.atMs, audioMs: 2000, interrupted: undefined };
}

/** A three-second utterance interrupted after one second. */
async function interruptLite(socket: EventSocket): Promise<void> {
  socket.send({
    type: "agent.speak_end",
    event_id: "utterance-2",
    audio: tone(3000, 330).toString("base64"),
  });
  await socket.next("agent.speak_started");
  await new Promise((r) => setTimeout(r, 1000));
  socket.send({ type: "agent.interrupt", event_id: "interrupt-1" });
  await socket.next("agent.speak_interrupted");
}

async function speakFull(socket: EventSocket, text: string, say = false) {
  const [type, id] = say ? ["avatar.say", "say-1"] : ["avatar.repeat", "repeat-1"];
  socket.send({ type, event_id: id, text });
  const started = await socket.next("avatar.speak_started", (e) => e.source_event_id === id);
  const ended = await socket.next("avatar.speak_ended", (e) => e.source_event_id === id, 120_000);
  return { playedMs: ended.atMs - started.atMs, audioMs: undefined, interrupted: Boolean(ended.interrupted) };
}

function describe(e: ReceivedEvent): string {
  const details = Object.entries(e)
    .filter(([k]) => !["type", "atMs", "event_id", "session_id"].includes(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  return `+${String(e.atMs).padStart(6)} ms  ${e.type.padEnd(30)} ${details}`;
}
