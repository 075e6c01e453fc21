import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  formatIdentitySet,
  generateIdentitySet,
  localIdentityFile,
  parseIdentitySet,
  writeDiscovery,
} from "@avatar/runtime";
import { testIdentities } from "@avatar/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cli, startTestServices, type TestServices } from "./support.js";

/** Where avatarctl finds the services and its identity: flags, environment, or a suite running here. */

let services: TestServices;
let dataDir: string;
beforeAll(async () => {
  services = await startTestServices();
});
afterAll(async () => {
  await services?.stop();
});
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "avatarctl-data-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const urls = () => ({
  tokens: services.env.TOKENS_URL ?? "",
  catalog: services.env.CATALOG_URL ?? "",
  sessions: services.env.SESSIONS_URL ?? "",
});

function discover(pid: number, operatorKey = testIdentities.privateKeys.avatarctl): void {
  const services = {
    ...urls(),
    agents: "http://127.0.0.1:9",
    memory: "http://127.0.0.1:9",
    pipeline: "",
    webhooks: "",
  };
  writeDiscovery(dataDir, { pid, gateway: "http://127.0.0.1:9", services, operatorKey });
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.exit(0)"]);
  return child.pid ?? 0;
}

describe("next to a running suite (pnpm start)", () => {
  it("needs no flags: URLs and the operator's key come from DATA_DIR/suite.json", async () => {
    discover(process.pid);
    const result = await cli(["space", "create", "--name", "Acme", "--credits", "5", "--json"], {
      DATA_DIR: dataDir,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const { space_id } = JSON.parse(result.stdout);
    expect(services.sessions.creditsLeft(space_id)).toBe("5");
  });

  it("lets flags and the environment win over the discovery file", async () => {
    discover(process.pid);
    const result = await cli(["space", "list", "--tokens-url", "http://127.0.0.1:9"], { DATA_DIR: dataDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\(unavailable\)/);
  });

  it("says so when the suite that wrote the file is gone", async () => {
    discover(deadPid());
    const result = await cli(["space", "list"], { DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /no URL for the tokens service: .*suite\.json is from a suite that is no longer running/,
    );
  });
});

describe("the operator's service identity", () => {
  it("is required, and named when missing", async () => {
    const result = await cli(["space", "list"], { DATA_DIR: dataDir, TOKENS_URL: urls().tokens });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no service identity: set SERVICE_IDENTITY_KEY to the avatarctl key/);
  });

  it("comes from the machine's identity set when no suite runs and no key is set", async () => {
    mkdirSync(path.dirname(localIdentityFile(dataDir)), { recursive: true });
    writeFileSync(localIdentityFile(dataDir), formatIdentitySet(testIdentities));
    const result = await cli(["space", "list", "--json"], { DATA_DIR: dataDir, TOKENS_URL: urls().tokens });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("is refused when it is not the deployment's, with the services' words", async () => {
    const result = await cli(["space", "list"], {
      DATA_DIR: dataDir,
      TOKENS_URL: urls().tokens,
      SERVICE_IDENTITY_KEY: generateIdentitySet().privateKeys.avatarctl,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /refused avatarctl's service identity \(Unauthenticated\): invalid service credential/,
    );
  });

  it("rejects a key that is not a key", async () => {
    const result = await cli(["space", "list"], {
      DATA_DIR: dataDir,
      TOKENS_URL: urls().tokens,
      SERVICE_IDENTITY_KEY: "not-a-key",
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/SERVICE_IDENTITY_KEY \(avatarctl\): a private key is 32 bytes in base64/);
  });
});

describe("identity generate", () => {
  it("prints a fresh set for the Secret without calling any service", async () => {
    const first = await cli(["identity", "generate"], { DATA_DIR: dataDir });
    const second = await cli(["identity", "generate"], { DATA_DIR: dataDir });
    expect(first.code).toBe(0);
    const set = parseIdentitySet(first.stdout);
    expect(Object.keys(set.privateKeys)).toContain("avatarctl");
    expect(set.publicKeys.split(",")).toHaveLength(9);
    expect(parseIdentitySet(second.stdout).privateKeys.avatarctl).not.toBe(set.privateKeys.avatarctl);
  });
});
