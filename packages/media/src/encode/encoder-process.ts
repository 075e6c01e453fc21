import { type ChildProcessByStdio, spawn } from "node:child_process";
import { getPriority, setPriority } from "node:os";
import type { Readable, Writable } from "node:stream";
import { FRAME_MS, i420Size } from "../frames.js";
import { type ContainerFrame, FlvH264Reader, IvfReader } from "./container-readers.js";
import { ffmpegVideoArgs, type VideoEncoding, WARM_UP_FRAMES } from "./video-encoding.js";

/** Every encoder child process alive in this process: tests and shutdown checks read it. */
const live = new Set<EncoderProcess>();
export const liveEncoderProcesses = (): number => live.size;
/** Process ids of the live encoders (benchmarks read their CPU time from /proc). */
export const liveEncoderPids = (): number[] => [...live].flatMap((p) => (p.pid ? [p.pid] : []));

/**
 * How many steps above this process's priority an encoder runs where the process may raise one (root, or
 * CAP_SYS_NICE). A frame the encoder is late with is a freeze every viewer of the session sees, while
 * the rest of the pipeline (the model's stream, events, speech made ahead of playback) can wait a few ms.
 * Without the privilege (a container's unprivileged user) the encoder runs at the process's own priority.
 */
export const ENCODER_PRIORITY_BOOST = 5;

function raisePriority(pid: number): void {
  try {
    setPriority(pid, Math.max(-20, getPriority() - ENCODER_PRIORITY_BOOST));
  } catch {} // EACCES without the privilege; the encoder works the same, only without the head start
}

export interface EncoderOutput {
  /** The source AvFrame index this output belongs to. */
  index: number;
  data: Uint8Array;
  keyframe: boolean;
}

/**
 * One ffmpeg child encoding raw I420 frames from its stdin. It starts with a keyframe, gives back exactly
 * one output per frame written, in order, tagged with the index the caller wrote it under, and knows how
 * many frames are inside it still (to drop rather than queue).
 *
 * A gray warm-up frame goes in as soon as it is spawned and its output is thrown away: the encoder's
 * set-up and its first keyframe cost 50-130 ms on an idle machine (several times that on a busy one),
 * and a spare started ahead pays them before anyone waits. The first real frame is a keyframe all the
 * same (ffmpegVideoArgs forces it).
 */
export class EncoderProcess {
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly reader: FlvH264Reader | IvfReader;
  /** Source indices by the encoder's own input count. */
  private readonly pending = new Map<number, number>();
  private written = WARM_UP_FRAMES;
  private stderrTail = "";
  private exited = false;
  readonly exit: Promise<void>;

  constructor(
    binary: string,
    encoding: VideoEncoding,
    private readonly onOutput: (output: EncoderOutput, from: EncoderProcess) => void,
    private readonly onFailure: (error: Error, from: EncoderProcess) => void,
  ) {
    this.reader = encoding.codec === "H264" ? new FlvH264Reader(FRAME_MS) : new IvfReader();
    this.child = spawn(binary, ffmpegVideoArgs(encoding), { stdio: ["pipe", "pipe", "pipe"] });
    live.add(this);
    if (this.child.pid !== undefined) raisePriority(this.child.pid);
    this.exit = new Promise((resolve) => {
      this.child.once("close", (code, signal) => {
        this.exited = true;
        live.delete(this);
        // Any end that close() did not ask for is a failure: a signal (the OOM killer's) included.
        if (!this.closing) {
          const how = signal ? `was killed by ${signal}` : `exited with ${code}`;
          this.onFailure(new Error(`ffmpeg ${how}: ${this.stderrTail.trim()}`), this);
        }
        resolve();
      });
    });
    this.child.once("error", (error) => this.onFailure(error, this));
    this.child.stdin.on("error", () => {}); // EPIPE when ffmpeg dies first; the close event reports it
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000);
    });
    this.child.stdout.on("data", (chunk: Buffer) => this.read(chunk));
    const gray = new Uint8Array(i420Size(encoding.width, encoding.height)).fill(128);
    for (let i = 0; i < WARM_UP_FRAMES; i++) this.child.stdin.write(gray);
  }

  private closing = false;
  /** Whether anything (the warm-up frame, at first) has come out yet: the encoder is set up. */
  started = false;

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Frames written and not yet come out. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** The earliest source index written and not yet come out (frames come out in the order written). */
  get oldestInFlight(): number | undefined {
    for (const index of this.pending.values()) return index;
    return undefined;
  }

  get alive(): boolean {
    return !this.exited && !this.closing;
  }

  /**
   * Writes one I420 frame under the source index `index`. The pipe keeps a reference to the bytes until
   * ffmpeg reads them, and the renderer reuses its few frame buffers in rotation. Once the process runs,
   * the encoder's in-flight limit holds fewer frames than that rotation; a process still starting up may
   * hold more (VideoEncoder's startup allowance), so until its first output each frame is copied.
   */
  write(index: number, i420: Uint8Array): void {
    this.pending.set(this.written++, index);
    this.child.stdin.write(this.started ? i420 : i420.slice());
  }

  private read(chunk: Buffer): void {
    let frames: ContainerFrame[];
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      this.onFailure(error as Error, this);
      return;
    }
    for (const frame of frames) {
      this.started = true;
      const index = this.pending.get(frame.count);
      if (index === undefined) continue; // a warm-up frame
      this.pending.delete(frame.count);
      this.onOutput({ index, data: frame.data, keyframe: frame.keyframe }, this);
    }
  }

  /** Ends the child: stdin closed, killed if it has not gone within `graceMs`; resolves once it exited. */
  async close(graceMs = 500): Promise<void> {
    this.closing = true;
    if (!this.exited) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
      await this.exit;
      clearTimeout(timer);
    }
  }
}
