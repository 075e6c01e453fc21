import type { Migrations } from "@avatar/runtime";
import * as agentsTables from "./20261122_0001_agents_tables.js";
import * as embedVideoSettings from "./20261123_0002_embed_video_settings.js";
import * as secretAllowedHosts from "./20261124_0003_secret_allowed_hosts.js";
import * as embedLimits from "./20261124_0004_embed_limits.js";

/** Dated migrations, applied in name order. */
export const migrations: Migrations = {
  "20261122_0001_agents_tables": agentsTables,
  "20261123_0002_embed_video_settings": embedVideoSettings,
  "20261124_0003_secret_allowed_hosts": secretAllowedHosts,
  "20261124_0004_embed_limits": embedLimits,
};
