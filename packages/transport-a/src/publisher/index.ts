/**
 * Publishing the avatar into a transportA room with transportA's own WebRTC SDK. A separate entry
 * point: importing it loads the SDK's native library, which only a process that publishes needs.
 */
export { retainTransportA } from "./native-runtime.js";
export {
  type PublisherOptions,
  type PublisherState,
  type PublishReport,
  TransportAPublisher,
} from "./publisher.js";
export { maxVideoBitrate } from "./rtc-frames.js";
