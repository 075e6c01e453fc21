import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { MkvRecorder } from "../src/record/recorder.js";
import { encodedFrames } from "./encoded-frames.js";
import { framesOf } from "./ffmpeg-decode.js";

const dir = await mkdtemp(join(tmpdir(), "media-recorder-"));

it("places media on the sender's timeline though the viewer took seconds to connect and frames came in bursts", async () => {
  const frames = await encodedFrames("VP8", 30);
  let now = 0;
  const recorder = new MkvRecorder(join(dir, "slow-connect.webm"), () => now);
  // The viewer connects five seconds after the recorder was made; frames then arrive ten at a time.
  now = 5_000;
  const rtp = (i: number) => 1_000 + i * 3_600; // 25 fps on the 90 kHz clock
  const deliver = (from: number, to: number) => {
    for (const f of frames.slice(from, to)) {
      recorder.videoFrame({
        codec: "VP8",
        rtpTimestamp: rtp(f.index),
        data: f.data,
        keyframe: f.keyframe,
        receivedAt: now,
      });
    }
  };
  deliver(0, 10);
  // The sender reports come a tenth of a second after the first frames: within the recorder's wait.
  now = 5_100;
  recorder.senderReport({ kind: "video", ntpMs: 1_000_000, rtpTimestamp: rtp(0) });
  recorder.senderReport({ kind: "audio", ntpMs: 1_000_000, rtpTimestamp: 0 });
  now = 5_200;
  deliver(10, 20);
  now = 5_300;
  deliver(20, 30);
  const summary = await recorder.close();
  expect(summary.timeline).toBe("sender-reports");
  expect(summary.videoFrames).toBe(30);

  // As stored (the file's milliseconds): 40 ms apart, as sent, not in the bursts they arrived in.
  const stored = framesOf(summary.path, ["-map", "0:v", "-c", "copy"]);
  expect(stored.frames.map((f) => f.pts)).toEqual(Array.from({ length: 30 }, (_, i) => i * 40));
  // And every one decodes.
  const decoded = framesOf(summary.path);
  expect(
    decoded.frames.filter((f) => f.stream === 0),
    decoded.errors,
  ).toHaveLength(30);
});
