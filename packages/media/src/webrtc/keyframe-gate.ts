/**
 * What a video receiver does about loss, as a browser's does: after a gap in the RTP sequence, frames
 * that follow cannot be decoded (they refer to what was lost), so they are held back until the next
 * keyframe, and the sender is asked for one (PLI), again every `retryMs` while none comes. The
 * encoder's own keyframes are ten seconds apart, so without asking a viewer would freeze that long.
 */
export class KeyframeGate {
  private waiting = true; // nothing decodes before the first keyframe
  private askedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly askForKeyframe: () => boolean,
    private readonly now: () => number = () => performance.now(),
    private readonly retryMs = 500,
  ) {}

  /** Packets were lost: what comes next is undecodable until a keyframe. */
  lost(): void {
    this.waiting = true;
    this.ask();
  }

  /** Whether a complete frame can be decoded (and so delivered). */
  admit(keyframe: boolean): boolean {
    if (keyframe) this.waiting = false;
    else if (this.waiting) this.ask();
    return !this.waiting;
  }

  private ask(): void {
    const now = this.now();
    if (now - this.askedAt < this.retryMs) return;
    // Not sent (not connected yet, or no video seen): asked again with the next frame.
    if (this.askForKeyframe()) this.askedAt = now;
  }
}
