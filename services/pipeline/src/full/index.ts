import type { Clients, Env } from "@avatar/runtime";
import type { SessionProvidersFactory } from "../providers/session-providers.js";
import type { ModeFactory } from "../realtime/mode.js";
import { FullMode, type FullModeOptions } from "./full-mode.js";
import { readFullModeOptions } from "./settings.js";

export { FullMode, type FullModeOptions } from "./full-mode.js";
export { fullModeSettingsSpec, readFullModeOptions } from "./settings.js";

export interface FullModeDeps {
  /** The session's providers (providers/registry.ts: `sessionProviders(deps)`). */
  providers: SessionProvidersFactory;
  /** The memory service, for the attached memory's content. */
  clients: Pick<Clients, "memory">;
  /** FULL_* tuning settings (full/settings.ts); `options` wins over them. */
  env?: Env;
  options?: FullModeOptions;
}

/**
 * The FULL mode's factory, bound to what every session of the process shares:
 *   const fullMode = createFullMode({ providers: sessionProviders(deps), clients: deps.clients });
 */
export function createFullMode(deps: FullModeDeps): ModeFactory {
  const options = { ...(deps.env ? readFullModeOptions(deps.env) : {}), ...deps.options };
  return (ctx) => new FullMode(ctx, deps.providers(ctx), deps.clients.memory, options);
}
