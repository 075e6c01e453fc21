/**
 * Publishing the avatar into a transportA room with transportA's own WebRTC SDK. A separate entry
 * point: importing it loads the SDK's native library, which only a process that publishes needs.
 */
import { dispose } from "@livekit/rtc-node";

export {
  type PublisherOptions,
  type PublisherState,
  type PublishReport,
  TransportAPublisher,
} from "./publisher.js";
export { maxVideoBitrate } from "./rtc-frames.js";

/** Releases the SDK's native resources; call once when the process stops publishing for good. */
export const disposeTransportA = (): Promise<void> => dispose();
