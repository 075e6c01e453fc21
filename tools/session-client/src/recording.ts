import { MkvRecorder, type RecordingSummary, WhepViewer, whepOverHttp } from "@avatar/media";

const FIRST_PICTURE_LIMIT_MS = 10_000;

async function firstPicture(viewer: WhepViewer, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no picture from the session within ${limitMs} ms`)), limitMs);
  });
  try {
    await Promise.race([viewer.firstVideoFrame, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Watches a session as a WHEP viewer and records what arrives to a file a person can play (`.mkv`, or
 * `.webm` for VP8): the same stream a browser shows, with its lip sync.
 */
export class SessionRecording {
  private constructor(
    private readonly viewer: WhepViewer,
    private readonly recorder: MkvRecorder,
  ) {}

  static async start(
    baseUrl: string,
    sessionId: string,
    sessionToken: string,
    file: string,
  ): Promise<SessionRecording> {
    const recorder = new MkvRecorder(file);
    const url = new URL(`/v1/sessions/${sessionId}/whep`, baseUrl).toString();
    const viewer = await WhepViewer.connect(whepOverHttp(url, { Authorization: `Bearer ${sessionToken}` }), {
      ...recorder.viewerCallbacks(),
    });
    await viewer.connected;
    // A recording of what a person sees starts with a picture: on a loaded machine the first keyframe
    // can come seconds after the connection, and anything said before it would be recorded unseen.
    try {
      await firstPicture(viewer, FIRST_PICTURE_LIMIT_MS);
    } catch (error) {
      await viewer.close();
      await recorder.close();
      throw error;
    }
    return new SessionRecording(viewer, recorder);
  }

  get received(): { videoFrames: number; audioPackets: number } {
    return { videoFrames: this.viewer.stats.videoFrames, audioPackets: this.viewer.stats.audioPackets };
  }

  /** Ends the viewer (WHEP DELETE) and finishes the file. */
  async stop(): Promise<RecordingSummary> {
    await this.viewer.close();
    return this.recorder.close();
  }
}
