import { MkvRecorder, type RecordingSummary, WhepViewer, whepOverHttp } from "@avatar/media";

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
