/**
 * A synthetic frame source for the publisher's tests: NOT the avatar renderer. It yields AvFrames of the
 * stream's real shape (I420 video of the asked size, SAMPLES_PER_FRAME of 48 kHz PCM): a grey picture
 * with a bright square that moves one step a frame, and a 440 Hz tone on every other second, paced at
 * the stream's frame rate unless told not to wait.
 */
import { type AvFrame, FRAME_MS, i420Size, MEDIA_SAMPLE_RATE, SAMPLES_PER_FRAME } from "@avatar/media";

export interface SyntheticFramesOptions {
  width: number;
  height: number;
  /** Frames to yield; endless when absent. */
  count?: number;
  /** Pace at FRAME_MS (default) or yield as fast as they are taken. */
  paced?: boolean;
  signal?: AbortSignal;
}

export async function* syntheticFrames(options: SyntheticFramesOptions): AsyncGenerator<AvFrame> {
  const { width, height, count = Number.POSITIVE_INFINITY, paced = true, signal } = options;
  const started = Date.now();
  for (let index = 0; index < count && !signal?.aborted; index++) {
    if (paced) {
      const due = started + index * FRAME_MS;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
    }
    const speaking = Math.floor((index * FRAME_MS) / 1000) % 2 === 0;
    yield {
      index,
      at: started + index * FRAME_MS,
      video: { width, height, data: picture(width, height, index) },
      audio: tone(index, speaking),
      mouthOpen: speaking ? 0.5 : 0,
      speaking,
    };
  }
}

function picture(width: number, height: number, index: number): Uint8Array {
  const data = new Uint8Array(i420Size(width, height));
  data.fill(96, 0, width * height); // luma: mid grey
  data.fill(128, width * height); // chroma: neutral
  const side = Math.max(2, Math.floor(Math.min(width, height) / 8));
  const x0 = (index * 4) % Math.max(1, width - side);
  const y0 = Math.floor((height - side) / 2);
  for (let y = y0; y < y0 + side; y++) data.fill(235, y * width + x0, y * width + x0 + side);
  return data;
}

function tone(index: number, speaking: boolean): Int16Array {
  const samples = new Int16Array(SAMPLES_PER_FRAME);
  if (!speaking) return samples;
  const first = index * SAMPLES_PER_FRAME;
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * (first + i)) / MEDIA_SAMPLE_RATE));
  }
  return samples;
}
