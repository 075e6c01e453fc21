import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  discoveryFile,
  discoveryIsLive,
  readDiscovery,
  removeDiscovery,
  type SuiteDiscovery,
  writeDiscovery,
} from "../src/discovery.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "discovery-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const services = {
  tokens: "http://127.0.0.1:1",
  sessions: "http://127.0.0.1:2",
  catalog: "http://127.0.0.1:3",
  agents: "http://127.0.0.1:4",
  memory: "http://127.0.0.1:5",
  pipeline: "http://127.0.0.1:6",
  webhooks: "http://127.0.0.1:7",
};
const mine = (): SuiteDiscovery => ({
  pid: process.pid,
  gateway: "http://127.0.0.1:8",
  services,
  operatorKey: "k",
});

describe("the suite's discovery file", () => {
  it("is written for its owner only and read back", () => {
    writeDiscovery(dir, mine());
    expect(statSync(discoveryFile(dir)).mode & 0o777).toBe(0o600);
    expect(readDiscovery(dir)).toEqual(mine());
    expect(discoveryIsLive(mine())).toBe(true);
  });

  it("is removed only by the process that wrote it", () => {
    writeDiscovery(dir, { ...mine(), pid: process.pid + 1_000_000 });
    removeDiscovery(dir);
    expect(readDiscovery(dir)?.pid).toBe(process.pid + 1_000_000);
    writeDiscovery(dir, mine());
    removeDiscovery(dir);
    expect(readDiscovery(dir)).toBeUndefined();
  });

  it("reads as absent when missing or not a discovery file, and as stale when its process is gone", () => {
    expect(readDiscovery(dir)).toBeUndefined();
    writeFileSync(discoveryFile(dir), "{not json");
    expect(readDiscovery(dir)).toBeUndefined();
    writeFileSync(discoveryFile(dir), JSON.stringify({ pid: "1" }));
    expect(readDiscovery(dir)).toBeUndefined();
    expect(discoveryIsLive({ ...mine(), pid: 2 ** 30 })).toBe(false);
  });
});
