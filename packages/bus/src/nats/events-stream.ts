/** The one JetStream stream behind every durable event: AVATAR_EVENTS on `events.>`. */
import {
  DiscardPolicy,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { DEDUPE_WINDOW_MS, EVENTS_MAX_AGE_MS } from "../durable-settings.js";
import { isMissingStream } from "./errors.js";

export const EVENTS_STREAM = "AVATAR_EVENTS";

const config: Partial<StreamConfig> & { name: string } = {
  name: EVENTS_STREAM,
  subjects: ["events.>"],
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  discard: DiscardPolicy.Old,
  max_age: nanos(EVENTS_MAX_AGE_MS),
  duplicate_window: nanos(DEDUPE_WINDOW_MS),
};

/** Creates the stream, or brings an existing one's subjects and limits to the wanted values. */
export async function ensureEventsStream(jsm: JetStreamManager): Promise<void> {
  let current: StreamConfig;
  try {
    current = (await jsm.streams.info(EVENTS_STREAM)).config;
  } catch (err) {
    if (!isMissingStream(err)) throw err;
    try {
      await jsm.streams.add(config);
      return;
    } catch (addErr) {
      // Another process may have created it at the same moment; then it exists now.
      current = (await jsm.streams.info(EVENTS_STREAM).catch(() => Promise.reject(addErr))).config;
    }
  }
  const drifted =
    current.subjects.join(",") !== config.subjects?.join(",") ||
    current.max_age !== config.max_age ||
    current.duplicate_window !== config.duplicate_window;
  if (drifted) await jsm.streams.update(EVENTS_STREAM, { ...current, ...config });
}
