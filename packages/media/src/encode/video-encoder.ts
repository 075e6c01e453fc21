import type { AvFrame } from "../frames.js";
import { type EncoderOutput, EncoderProcess } from "./encoder-process.js";
import { ffmpegBinary } from "./ffmpeg-binary.js";
import type { EncodedVideoFrame, VideoEncoding } from "./video-encoding.js";

/** Extra frames a handover's incoming encoder may hold while it starts (its first frame takes tens of ms more). */
const STARTUP_ALLOWANCE = 5;

export interface VideoEncoderOptions {
  encoding: VideoEncoding;
  onFrame: (frame: EncodedVideoFrame) => void;
  /** The encoder failed and could not be restarted by itself (e.g. ffmpeg missing). */
  onError?: (error: Error) => void;
  ffmpegPath?: string;
  /** Frames inside a running encoder before new ones are dropped (bounds memory and delay when it falls behind). */
  maxInFlight?: number;
  /**
   * A handover that has produced nothing by then is abandoned (the old encoder goes on); one whose
   * keyframe is out but whose old encoder still owes earlier frames by then goes ahead without them.
   */
  handoverTimeoutMs?: number;
  /**
   * When a spare process is kept: `"once-asked"` (the default) from the first keyframe request on, for
   * the next one; `"always"` from the first frame on. A spare's spawn and set-up take a share of the
   * machine that the frames need (a freeze on a loaded one), which a session whose only viewer never
   * asks for a keyframe need not pay; its first request costs a spawn instead (the picture goes on meanwhile).
   */
  keepSpare?: "once-asked" | "always";
  /** How long after a keyframe (a fresh encoder's first frame) the spare starts: not as a picture starts. */
  spareDelayMs?: number;
}

export interface VideoEncoderStats {
  submitted: number;
  encoded: number;
  /** Frames not encoded because the encoder was behind. */
  dropped: number;
  /** Keyframes delivered by handing over to a fresh encoder. */
  handovers: number;
}

/**
 * A session's video encoder with keyframes on demand. ffmpeg's CLI cannot be told "keyframe now", so a
 * keyframe request hands over to a fresh encoder process (whose first frame is always a keyframe): from
 * the next frame on it gets every frame too, and once its keyframe is out and the old one has returned
 * every frame before it, it replaces the old one. Once keyframes are asked for, a spare process is kept
 * started and idle, so the next handover costs one frame's encode, not a spawn (see `keepSpare`).
 * Outputs leave in index order; frames are dropped (and counted) rather than queued when it falls behind.
 */
export class VideoEncoder {
  private readonly binary: string;
  private readonly maxInFlight: number;
  private readonly handoverTimeoutMs: number;
  private readonly spareDelayMs: number;
  /** Whether a spare is kept (see `keepSpare`). */
  private spareWanted: boolean;
  private active: EncoderProcess | undefined;
  private incoming:
    | {
        process: EncoderProcess;
        firstIndex: number | undefined;
        timer: NodeJS.Timeout;
        /** Its outputs, from its keyframe on, held while the old encoder returns the frames before it. */
        held: EncoderOutput[];
      }
    | undefined;
  private spare: EncoderProcess | undefined;
  private spareTimer: NodeJS.Timeout | undefined;
  /** Encoders handed over from, still exiting (close() waits for them too). */
  private readonly retiring = new Set<EncoderProcess>();
  private lastEmitted = -1;
  private closed = false;
  /** Encoders kept failing (e.g. no ffmpeg): nothing more is started. */
  private failed = false;
  private consecutiveFailures = 0;
  readonly stats: VideoEncoderStats = { submitted: 0, encoded: 0, dropped: 0, handovers: 0 };

  constructor(private readonly options: VideoEncoderOptions) {
    this.binary = options.ffmpegPath ?? ffmpegBinary();
    this.maxInFlight = options.maxInFlight ?? 3;
    this.handoverTimeoutMs = options.handoverTimeoutMs ?? 1000;
    this.spareDelayMs = options.spareDelayMs ?? 2000;
    this.spareWanted = options.keepSpare === "always";
  }

  /** Encodes one frame; false when it was dropped because the encoder is behind (or closed). */
  encode(frame: AvFrame): boolean {
    if (this.closed || this.failed) return false;
    this.stats.submitted++;
    const { video } = frame;
    if (video.width !== this.options.encoding.width || video.height !== this.options.encoding.height) {
      throw new Error(
        `frame is ${video.width}x${video.height}, the encoder takes ${this.options.encoding.width}x${this.options.encoding.height}`,
      );
    }
    this.active ??= this.takeSpare(); // a fresh encoder: its first output is a keyframe
    const incoming = this.incoming;
    if (incoming && incoming.process.inFlight < this.limit(incoming.process)) {
      incoming.firstIndex ??= frame.index;
      incoming.process.write(frame.index, video.data);
    }
    if (!this.active.started && !incoming) {
      // Nobody sees anything before its first frame: it starts from the newest one once set up, rather
      // than from frames queued while it was (stale by then, and those after them dropped: a freeze).
      this.stats.dropped++;
      return false;
    }
    if (this.active.inFlight >= this.limit(this.active)) {
      if (!incoming) this.stats.dropped++;
      return incoming !== undefined;
    }
    this.active.write(frame.index, video.data);
    return true;
  }

  /**
   * Whether the next frame goes into a set-up encoder: a fresh one is given no frames until its set-up
   * is done (`warm()` starts one ahead).
   */
  get ready(): boolean {
    return (this.active ?? this.spare)?.started === true;
  }

  /** A process still starting up (spawn, encoder setup) may hold a few more frames before its first output. */
  private limit(process: EncoderProcess): number {
    return process.started ? this.maxInFlight : this.maxInFlight + STARTUP_ALLOWANCE;
  }

  /**
   * Starts an encoder process ahead of the first frame (a viewer is connecting), so that frame costs an
   * encode, not a spawn. A spare for later keyframe requests, when kept, starts a while after a keyframe,
   * not together with it: each spawn and encoder set-up takes a share of the machine the frames need.
   */
  warm(): void {
    if (!this.active) this.ensureSpare();
  }

  /** The next frame out will be a keyframe (for a new viewer, or a viewer's PLI). */
  requestKeyframe(): void {
    if (this.closed || !this.active || this.incoming) return;
    this.spareWanted = true;
    const process = this.takeSpare();
    const timer = setTimeout(() => this.handoverTimedOut(), this.handoverTimeoutMs);
    this.incoming = { process, firstIndex: undefined, timer, held: [] };
  }

  private takeSpare(): EncoderProcess {
    const spare = this.spare?.alive ? this.spare : undefined;
    this.spare = undefined;
    return spare ?? this.start();
  }

  private ensureSpare(): void {
    if (!this.closed && !this.failed && !this.spare) this.spare = this.start();
  }

  private start(): EncoderProcess {
    return new EncoderProcess(
      this.binary,
      this.options.encoding,
      (output, from) => this.output(output, from),
      (error, from) => this.failure(error, from),
    );
  }

  private output(output: EncoderOutput, from: EncoderProcess): void {
    if (this.closed) return;
    const incoming = this.incoming;
    if (incoming && from === incoming.process) {
      incoming.held.push(output);
      this.takeOverWhenOwedNothing();
      return;
    }
    if (from !== this.active) return;
    // Held back: the incoming encoder's keyframe will carry this index.
    if (incoming?.firstIndex !== undefined && output.index >= incoming.firstIndex) return;
    this.emit(output);
    if (incoming) this.takeOverWhenOwedNothing();
  }

  /**
   * The incoming encoder takes over once its keyframe is out and the old one owes no frame before it:
   * otherwise a keyframe that overtook frames still inside a loaded old encoder would skip them.
   */
  private takeOverWhenOwedNothing(): void {
    const keyframe = this.incoming?.held[0];
    const owed = this.active?.oldestInFlight;
    if (keyframe && (owed === undefined || owed >= keyframe.index)) this.takeOver();
  }

  private takeOver(): void {
    const incoming = this.incoming;
    if (!incoming) return;
    clearTimeout(incoming.timer);
    const old = this.active;
    this.active = incoming.process;
    this.incoming = undefined;
    this.stats.handovers++;
    if (old) this.retire(old);
    for (const output of incoming.held) this.emit(output);
  }

  private retire(process: EncoderProcess): void {
    this.retiring.add(process);
    void process.close().then(() => this.retiring.delete(process));
  }

  private emit(output: EncoderOutput): void {
    if (output.index <= this.lastEmitted) return;
    this.lastEmitted = output.index;
    this.stats.encoded++;
    this.consecutiveFailures = 0;
    this.options.onFrame({
      index: output.index,
      codec: this.options.encoding.codec,
      data: output.data,
      keyframe: output.keyframe,
    });
    // After a fresh encoder's first frame (a keyframe, as after a handover), the next keyframe request
    // finds a spare ready, once requests come. Only at keyframes: a spare that keeps dying is not
    // restarted at every frame.
    if (output.keyframe && !this.incoming && this.spareWanted) this.ensureSpareSoon();
  }

  private ensureSpareSoon(): void {
    if (this.spare || this.spareTimer) return;
    this.spareTimer = setTimeout(() => {
      this.spareTimer = undefined;
      this.ensureSpare();
    }, this.spareDelayMs);
    this.spareTimer.unref();
  }

  private handoverTimedOut(): void {
    const incoming = this.incoming;
    if (!incoming) return;
    if (incoming.held.length > 0) {
      this.takeOver(); // the old encoder is stuck: its frames are lost, the picture goes on
      return;
    }
    this.incoming = undefined;
    void incoming.process.close();
  }

  private failure(error: Error, from: EncoderProcess): void {
    void from.close();
    if (this.closed) return;
    if (from === this.spare) this.spare = undefined;
    if (this.incoming?.process === from) {
      clearTimeout(this.incoming.timer);
      this.incoming = undefined;
    }
    if (from === this.active) {
      this.active = undefined; // the next frame starts a fresh one (a keyframe), or the incoming one takes over
      if (this.incoming?.held.length) this.takeOver();
    }
    this.consecutiveFailures++;
    if (this.consecutiveFailures >= 3 && !this.failed) {
      this.failed = true;
      for (const p of [this.active, this.spare]) void p?.close();
      this.active = this.spare = undefined;
      this.options.onError?.(error);
    }
  }

  /** Stops every encoder process; resolves once all of them have exited. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.spareTimer);
    if (this.incoming) clearTimeout(this.incoming.timer);
    const processes = [this.active, this.incoming?.process, this.spare, ...this.retiring].filter(
      (p) => p !== undefined,
    );
    this.active = this.spare = this.incoming = undefined;
    await Promise.all(processes.map((p) => p.close()));
  }
}
