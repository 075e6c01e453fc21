import type { Env } from "@avatar/runtime";
import { createFullMode, type FullMode, type FullModeOptions } from "../src/full/index.js";
import { sessionProviders } from "../src/providers/registry.js";
import type { RecordingSession } from "./full-harness.js";
import type { FakeServices } from "./providers-fakes.js";

/** A FULL mode for the recording session, with providers chosen by the real registry from `env`. */
export function startFull(
  session: RecordingSession,
  env: Env,
  fakes: FakeServices,
  options?: FullModeOptions,
): FullMode {
  const providers = sessionProviders({ clients: fakes.clients, env, log: session.log });
  return createFullMode({ providers, clients: fakes.clients, options })(session) as FullMode;
}
