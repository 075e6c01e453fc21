import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ServiceName } from "./clients.js";

/**
 * The one-process suite's discovery file, DATA_DIR/suite.json: where its services listen (random
 * loopback ports) and the operator's credential, so that `avatarctl` next to `pnpm start` needs no flags.
 * Readable by its owner only (it holds a private key); removed when the suite stops.
 */
export interface SuiteDiscovery {
  /** The suite's process: a file whose process is gone is stale. */
  pid: number;
  gateway: string;
  services: Record<ServiceName, string>;
  /** The operator CLI's service identity key (an Ed25519 seed, base64). */
  operatorKey: string;
}

export function discoveryFile(dataDir: string): string {
  return path.resolve(dataDir, "suite.json");
}

export function writeDiscovery(dataDir: string, discovery: SuiteDiscovery): void {
  const file = discoveryFile(dataDir);
  const draft = `${file}.${process.pid}.tmp`;
  writeFileSync(draft, `${JSON.stringify(discovery, null, 2)}\n`, { mode: 0o600 });
  renameSync(draft, file);
}

/** Removes the file if it is still this process's (another suite may have started on the folder since). */
export function removeDiscovery(dataDir: string): void {
  if (readDiscovery(dataDir)?.pid === process.pid) rmSync(discoveryFile(dataDir), { force: true });
}

/** The discovery file, or undefined when there is none or it cannot be read as one. */
export function readDiscovery(dataDir: string): SuiteDiscovery | undefined {
  let parsed: Partial<SuiteDiscovery>;
  try {
    parsed = JSON.parse(readFileSync(discoveryFile(dataDir), "utf8"));
  } catch {
    return undefined;
  }
  const ok =
    typeof parsed.pid === "number" &&
    typeof parsed.gateway === "string" &&
    typeof parsed.operatorKey === "string" &&
    typeof parsed.services === "object" &&
    parsed.services !== null;
  return ok ? (parsed as SuiteDiscovery) : undefined;
}

/** Whether the process that wrote a discovery file is still running. */
export function discoveryIsLive(discovery: SuiteDiscovery): boolean {
  try {
    process.kill(discovery.pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
