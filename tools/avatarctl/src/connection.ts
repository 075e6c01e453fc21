import { existsSync, readFileSync } from "node:fs";
import {
  type Clients,
  ConfigError,
  createClients,
  discoveryFile,
  discoveryIsLive,
  IDENTITY_KEY_ENV,
  identityFromKeys,
  localIdentityFile,
  parseIdentitySet,
  readDiscovery,
  type ServiceIdentity,
  type ServiceName,
  type SuiteDiscovery,
} from "@avatar/runtime";
import { type OptionValues, resolveServiceUrls } from "./args.js";
import { UsageError } from "./errors.js";

/**
 * Where the services are and who the CLI is to them. URLs: the flag, else the environment, else the
 * discovery file of a suite running on DATA_DIR (`pnpm start` writes .data/suite.json). Identity:
 * SERVICE_IDENTITY_KEY (in a cluster, the `avatarctl` key of the avatar-service-identity Secret), else
 * the running suite's operator key, else the machine's identity set under DATA_DIR/keys.
 */
export function connect(
  needed: readonly ServiceName[],
  values: OptionValues,
  env: Record<string, string | undefined>,
): Clients {
  const dataDir = env.DATA_DIR || ".data";
  const discovery = readDiscovery(dataDir);
  const live = discovery && discoveryIsLive(discovery) ? discovery : undefined;
  let urls: ReturnType<typeof resolveServiceUrls>;
  try {
    urls = resolveServiceUrls(needed, values, env, live?.services);
  } catch (err) {
    if (err instanceof UsageError && discovery && !live) {
      throw new UsageError(
        `${err.message}; ${discoveryFile(dataDir)} is from a suite that is no longer running (pid ${discovery.pid})`,
      );
    }
    throw err;
  }
  return createClients(urls, cliIdentity(env, dataDir, live));
}

function cliIdentity(
  env: Record<string, string | undefined>,
  dataDir: string,
  live: SuiteDiscovery | undefined,
): ServiceIdentity {
  const key = env[IDENTITY_KEY_ENV]?.trim() || live?.operatorKey || localOperatorKey(dataDir);
  if (!key) {
    throw new UsageError(
      `no service identity: set ${IDENTITY_KEY_ENV} to the avatarctl key of the avatar-service-identity Secret, or run next to pnpm start`,
    );
  }
  try {
    return identityFromKeys("avatarctl", key);
  } catch (err) {
    throw err instanceof ConfigError ? new UsageError(err.problems.join("; ")) : err;
  }
}

function localOperatorKey(dataDir: string): string | undefined {
  const file = localIdentityFile(dataDir);
  if (!existsSync(file)) return undefined;
  try {
    return parseIdentitySet(readFileSync(file, "utf8")).privateKeys.avatarctl;
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
}
