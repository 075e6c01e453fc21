import type { AvFrame } from "@avatar/media";

/** A source of frames by callback, as the session's MediaSession offers them (`tap`): returns an unsubscribe. */
export type FrameTap = (listener: (frame: AvFrame) => void) => () => void;

/**
 * The frames of a tap as an AsyncIterable, for a consumer that pulls (the transportA publisher). The tap
 * never waits for the consumer: frames queue up to `maxQueued` (one second by default), then the oldest
 * go, so a stalled consumer costs a bounded amount of memory and catches up with the present. Ends when
 * the signal aborts or the consumer stops iterating; `dropped` counts what was let go. Queued frames own
 * their pixels (the renderer's buffers are reused).
 */
export function tappedFrames(
  tap: FrameTap,
  options: { signal?: AbortSignal; maxQueued?: number } = {},
): AsyncIterable<AvFrame> & { readonly dropped: number } {
  const maxQueued = options.maxQueued ?? 25;
  const queue: AvFrame[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let dropped = 0;
  let unsubscribe: (() => void) | undefined;
  const finish = () => {
    done = true;
    unsubscribe?.();
    wake?.();
  };

  async function* frames(): AsyncGenerator<AvFrame> {
    if (options.signal?.aborted) return;
    options.signal?.addEventListener("abort", finish, { once: true });
    unsubscribe = tap((frame) => {
      if (done) return;
      // The renderer reuses its video buffers a few frames later: a queued frame keeps its own copy.
      queue.push({ ...frame, video: { ...frame.video, data: frame.video.data.slice() } });
      if (queue.length > maxQueued) {
        queue.shift();
        dropped++;
      }
      wake?.();
    });
    try {
      while (!done) {
        const frame = queue.shift();
        if (frame) {
          yield frame;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      finish();
      options.signal?.removeEventListener("abort", finish);
    }
  }

  const iterable = frames();
  return {
    [Symbol.asyncIterator]: () => iterable,
    get dropped() {
      return dropped;
    },
  };
}
