import type { RendererObserver } from "@avatar/media";
import { rendererDroppedFrames, rendererFrameTime } from "@avatar/runtime";

export interface RendererMetrics extends RendererObserver {
  /** The encoder's dropped frames of a stream that stopped. */
  encoderDropped(frames: number): void;
}

/** A session's renderer and encoder as the suite's metrics, labelled with its stream's quality. */
export function rendererMetrics(quality: string): RendererMetrics {
  const frameTime = rendererFrameTime.labels({ quality });
  const skipped = rendererDroppedFrames.labels({ quality, stage: "render" });
  const dropped = rendererDroppedFrames.labels({ quality, stage: "encode" });
  return {
    rendered: (ms) => frameTime.observe(ms / 1000),
    skipped: () => skipped.inc(),
    encoderDropped: (frames) => {
      if (frames > 0) dropped.inc(frames);
    },
  };
}
