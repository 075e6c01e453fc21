/**
 * The one-process suite for the LITE benchmark: started on a fresh embedded Postgres, it prints one JSON
 * line with the gateway's and the services' URLs and the operator's identity key, and stops on SIGTERM.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger, onShutdownSignal } from "@avatar/runtime";
import { startSuite } from "@avatar/suite";

const dataDir = await mkdtemp(path.join(tmpdir(), "avatar-bench-suite-"));
await chmod(dataDir, 0o755);
const log = createLogger({ level: "warn", sink: (line) => process.stderr.write(`${line}\n`) });
const env = { ...process.env, DATA_DIR: dataDir };
const suite = await startSuite({
  log,
  dataDir,
  gatewayPort: 0,
  gatewayHost: "127.0.0.1",
  env,
});
const ready = {
  gatewayUrl: suite.gatewayUrl,
  serviceUrls: suite.serviceUrls,
  operatorKey: suite.identities.privateKeys.avatarctl,
};
process.stdout.write(`${JSON.stringify(ready)}\n`);
onShutdownSignal(log, async () => {
  await suite.stop();
  await rm(dataDir, { recursive: true, force: true });
});
