import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, type Env } from "./config.js";
import type { Logger } from "./log.js";
import { createSealer, parseSealingKeys, type Sealer } from "./sealing.js";

/**
 * The sealer of a service: keys from ENCRYPTION_KEYS (`id:base64,...`; the current one is
 * ENCRYPTION_KEY_ID, else the last). Without ENCRYPTION_KEYS a key is generated once into
 * DATA_DIR/keys/<service>.key, which suits a single machine; replicas need ENCRYPTION_KEYS.
 */
export function sealerFromEnv(service: string, env: Env, log: Logger): Sealer {
  const configured = env.ENCRYPTION_KEYS?.trim();
  if (configured) {
    let keys: ReturnType<typeof parseSealingKeys>;
    try {
      keys = parseSealingKeys(configured);
      if (keys.length === 0) throw new Error("no keys");
      return createSealer(keys, env.ENCRYPTION_KEY_ID || (keys.at(-1)?.id ?? ""));
    } catch (err) {
      throw new ConfigError([`ENCRYPTION_KEYS must be id:base64(32 bytes),...: ${(err as Error).message}`]);
    }
  }
  const file = path.resolve(env.DATA_DIR || ".data", "keys", `${service}.key`);
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `local:${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    log.warn("generated a local encryption key; set ENCRYPTION_KEYS when running replicas", { file });
  }
  const keys = parseSealingKeys(readFileSync(file, "utf8"));
  return createSealer(keys, keys.at(-1)?.id ?? "");
}
