import type { Logger } from "@avatar/runtime";
import type { TurnRequest } from "./avatar-turn.js";

/**
 * The avatar's turns, one at a time, in the order they were asked for. An interrupt stops the turn
 * being spoken and drops those waiting (as `avatar.interrupt` and barge-in require).
 */
export class AvatarTurns {
  private readonly waiting: TurnRequest[] = [];
  private current: AbortController | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly run: (request: TurnRequest, signal: AbortSignal) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** A turn is being spoken, prepared or waiting. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  enqueue(request: TurnRequest): void {
    this.waiting.push(request);
    this.running ??= this.drain();
  }

  interrupt(reason = "interrupted"): void {
    this.waiting.length = 0;
    this.current?.abort(reason);
  }

  /** Interrupts everything and waits until the current turn has wound up. */
  async stop(): Promise<void> {
    this.interrupt("session stopped");
    await this.running;
  }

  private async drain(): Promise<void> {
    for (let request = this.waiting.shift(); request; request = this.waiting.shift()) {
      const controller = new AbortController();
      this.current = controller;
      try {
        await this.run(request, controller.signal);
      } catch (err) {
        this.log.error("avatar turn failed", { err });
      }
      this.current = undefined;
    }
    this.running = undefined;
  }
}
