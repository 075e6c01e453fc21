/**
 * A local peer for vendorC's BidiGenerateContent live protocol, for tests. It checks the key (query
 * parameter), that `setup` comes first and only once, that every message has exactly one known field,
 * the setup's shape (model, AUDIO modality, prebuilt voice, temperature, transcription switches) and
 * that audio is strict base64 PCM declared as `audio/pcm;rate=16000`. Like the vendor it ends the
 * session with a close code and reason when something is wrong. Its messages go out as binary frames,
 * as the vendor's do. It detects the user's turns from the audio's loudness (measured in audio time),
 * transcribes them as `heard`, and plays response scripts that can hold mid-turn.
 */
import type { WebSocket } from "ws";
import { isBase64, rms } from "./realtime-audio-fixtures.js";
import { Inbox, WsTestServer } from "./realtime-peer-transport.js";

export const VENDOR_C_MODELS = [
  "vendorC-2.5-flash-native-audio-preview-12-2025",
  "vendorC-3.1-flash-live-preview",
];
const VOICES = ["Achernar", "Aoede", "Charon", "Fenrir", "Kore", "Leda", "Orus", "Puck", "Zephyr"];
const CLIENT_FIELDS = ["setup", "clientContent", "realtimeInput", "toolResponse"];
const SETUP_FIELDS = [
  "model",
  "generationConfig",
  "systemInstruction",
  "tools",
  "realtimeInputConfig",
  "sessionResumption",
  "contextWindowCompression",
  "inputAudioTranscription",
  "outputAudioTranscription",
];
const INPUT_FIELDS = [
  "audio",
  "video",
  "text",
  "activityStart",
  "activityEnd",
  "audioStreamEnd",
  "mediaChunks",
];
const INPUT_RATE = 16_000;
const SPEECH_RMS = 500;

export type ClientMessage = Record<string, unknown>;

export interface LiveScript {
  audio: Uint8Array[];
  transcript: string[];
  /** The rate the audio is declared at (default 24000). */
  rate?: number;
  /** After this many chunks, wait until interrupted by the user or `release()`d. */
  holdAfter?: number;
}

export class VendorCLiveServer {
  private constructor(readonly transport: WsTestServer<VendorCPeer>) {}

  static async start(apiKey: string): Promise<VendorCLiveServer> {
    const transport = await WsTestServer.start<VendorCPeer>(
      "/ws/live.v1beta.BidiGenerateContent",
      () => undefined,
      (ws, _req, url) => new VendorCPeer(ws, url.searchParams.get("key") === apiKey),
    );
    return new VendorCLiveServer(transport);
  }

  get url(): string {
    return this.transport.url;
  }
}

export class VendorCPeer {
  readonly received = new Inbox<ClientMessage>();
  readonly violations: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly audio: Uint8Array[] = [];
  heard = "hello there";
  readonly responses: LiveScript[] = [];
  /** Ends the session at setup with a quota error, as the vendor does when the key is out of quota. */
  quotaExceeded = false;
  model = "";
  private setupDone = false;
  private generating: { release: () => void; interrupted: boolean } | undefined;
  private speech: { quietMs: number } | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly keyValid: boolean,
  ) {
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on("message", (data) => this.receive(data.toString()));
  }

  /** Sends a server message as the vendor does: JSON in a binary frame. */
  send(message: Record<string, unknown>): void {
    this.ws.send(Buffer.from(JSON.stringify(message)), { binary: true });
  }

  sendRaw(text: string): void {
    this.ws.send(Buffer.from(text), { binary: true });
  }

  closeWith(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  drop(): void {
    this.ws.terminate();
  }

  release(): void {
    this.generating?.release();
  }

  private get family31(): boolean {
    return this.model.includes("-3.1-");
  }

  private receive(text: string): void {
    let message: ClientMessage;
    try {
      message = JSON.parse(text) as ClientMessage;
    } catch {
      this.fail(1007, "Invalid JSON payload received.");
      return;
    }
    this.received.push(message);
    const fields = Object.keys(message);
    if (fields.length !== 1 || !CLIENT_FIELDS.includes(fields[0] as string)) {
      this.fail(1007, `Invalid JSON payload received. Expected exactly one of ${CLIENT_FIELDS.join(", ")}.`);
      return;
    }
    if (!this.setupDone && !("setup" in message)) {
      this.fail(1007, "The first message must be setup.");
      return;
    }
    if (message.setup) {
      this.onSetup(message.setup as Record<string, unknown>);
      return;
    }
    if (message.realtimeInput) {
      this.onInput(message.realtimeInput as Record<string, unknown>);
      return;
    }
    if (message.clientContent) {
      this.onClientContent(message.clientContent as Record<string, unknown>);
      return;
    }
  }

  private onSetup(setup: Record<string, unknown>): void {
    if (this.setupDone) {
      this.fail(1007, "setup may only be sent once.");
      return;
    }
    for (const field of Object.keys(setup)) {
      if (!SETUP_FIELDS.includes(field)) {
        this.fail(1007, `Invalid JSON payload received. Unknown name "${field}" at 'setup'.`);
        return;
      }
    }
    const model = String(setup.model ?? "");
    if (!VENDOR_C_MODELS.map((m) => `models/${m}`).includes(model)) {
      this.fail(
        1008,
        `${model} is not found for API version v1beta, or is not supported for bidiGenerateContent.`,
      );
      return;
    }
    this.model = model;
    // Not the client's fault: the session ends the way the vendor ends it, without a violation.
    if (!this.keyValid) {
      this.ws.close(1008, "API key not valid. Please pass a valid API key.");
      return;
    }
    if (this.quotaExceeded) {
      this.ws.close(1011, "You exceeded your current quota, please check your plan and billing details.");
      return;
    }
    const config = (setup.generationConfig ?? {}) as Record<string, unknown>;
    const modalities = config.responseModalities;
    if (!Array.isArray(modalities) || modalities.length !== 1 || modalities[0] !== "AUDIO") {
      this.fail(1007, "Native audio models require responseModalities [AUDIO].");
      return;
    }
    const voice = (
      config.speechConfig as { voiceConfig?: { prebuiltVoiceConfig?: { voiceName?: unknown } } } | undefined
    )?.voiceConfig?.prebuiltVoiceConfig?.voiceName;
    if (voice !== undefined && !VOICES.includes(String(voice))) {
      this.fail(1007, `Voice ${String(voice)} is not supported.`);
      return;
    }
    const t = config.temperature;
    if (t !== undefined && !(typeof t === "number" && t >= 0 && t <= 2)) {
      this.fail(1007, "temperature must be in [0, 2].");
      return;
    }
    const system = setup.systemInstruction as { parts?: { text?: unknown }[] } | undefined;
    if (
      system !== undefined &&
      !(Array.isArray(system.parts) && system.parts.every((p) => typeof p.text === "string"))
    ) {
      this.fail(1007, "Invalid systemInstruction.");
      return;
    }
    this.setupDone = true;
    this.send({ setupComplete: {} });
  }

  private onInput(input: Record<string, unknown>): void {
    const fields = Object.keys(input);
    if (fields.length !== 1 || !INPUT_FIELDS.includes(fields[0] as string)) {
      this.fail(1007, "realtimeInput must hold exactly one input.");
      return;
    }
    if (typeof input.text === "string") {
      void this.modelTurn();
      return;
    }
    const audio = input.audio as { data?: unknown; mimeType?: unknown } | undefined;
    if (!audio) return;
    if (audio.mimeType !== `audio/pcm;rate=${INPUT_RATE}`) {
      this.fail(1007, `Unsupported mimeType ${String(audio.mimeType)}.`);
      return;
    }
    if (!isBase64(audio.data)) {
      this.fail(1007, "Invalid value at 'realtime_input.audio.data': invalid base64.");
      return;
    }
    const pcm = new Uint8Array(Buffer.from(audio.data, "base64"));
    if (pcm.length % 2 !== 0) {
      this.fail(1007, "Audio must hold whole 16-bit samples.");
      return;
    }
    this.audio.push(pcm);
    this.detect(pcm);
  }

  private onClientContent(content: Record<string, unknown>): void {
    // Later families take clientContent only to seed history at the start, never mid-conversation.
    if (this.family31) {
      this.fail(1007, "clientContent is only supported for initial history.");
      return;
    }
    const turns = content.turns as { role?: unknown; parts?: { text?: unknown }[] }[] | undefined;
    const valid =
      Array.isArray(turns) &&
      turns.every(
        (t) =>
          t.role === "user" && Array.isArray(t.parts) && t.parts.every((p) => typeof p.text === "string"),
      );
    if (!valid) {
      this.fail(1007, "Invalid clientContent.turns.");
      return;
    }
    if (content.turnComplete === true) void this.modelTurn();
  }

  /** Server-side activity detection: loud chunks start speech, 500 ms of quiet audio end it. */
  private detect(pcm: Uint8Array): void {
    const chunkMs = (pcm.length / 2 / INPUT_RATE) * 1000;
    const loud = rms(pcm) > SPEECH_RMS;
    if (loud && !this.speech) {
      this.speech = { quietMs: 0 };
      if (this.generating) {
        this.generating.interrupted = true;
        this.generating.release();
        this.generating = undefined;
        this.send({ serverContent: { interrupted: true } });
      }
    } else if (this.speech) {
      this.speech.quietMs = loud ? 0 : this.speech.quietMs + chunkMs;
      if (this.speech.quietMs >= 500) {
        this.speech = undefined;
        for (const text of this.heard.split(/(?<= )/))
          this.send({ serverContent: { inputTranscription: { text } } });
        void this.modelTurn();
      }
    }
  }

  private async modelTurn(): Promise<void> {
    const script = this.responses.shift() ?? { audio: [new Uint8Array(4_800)], transcript: ["Hi."] };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const turn = { release, interrupted: false };
    this.generating = turn;
    const mimeType = `audio/pcm;rate=${script.rate ?? 24_000}`;
    for (let i = 0; i < script.audio.length; i++) {
      const audio = {
        modelTurn: {
          parts: [
            { inlineData: { mimeType, data: Buffer.from(script.audio[i] as Uint8Array).toString("base64") } },
          ],
        },
      };
      const text = script.transcript[i];
      const said = text === undefined ? {} : { outputTranscription: { text } };
      // The 3.1 family packs several contents into one message; 2.5 sends one per message.
      if (this.family31) this.send({ serverContent: { ...audio, ...said } });
      else {
        this.send({ serverContent: audio });
        if (text !== undefined) this.send({ serverContent: said });
      }
      if (script.holdAfter === i + 1) await held;
      if (turn.interrupted) return;
    }
    this.generating = undefined;
    this.send({ serverContent: { generationComplete: true } });
    this.send({ serverContent: { turnComplete: true } });
    this.send({ usageMetadata: { promptTokenCount: 10, responseTokenCount: 20, totalTokenCount: 30 } });
  }

  private fail(code: number, reason: string): void {
    this.violations.push(`${code} ${reason}`);
    this.ws.close(code, reason);
  }
}
