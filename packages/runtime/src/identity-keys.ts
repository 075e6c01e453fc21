import { createPrivateKey, createPublicKey, type KeyObject, randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, type Env } from "./config.js";
import type { Logger } from "./log.js";
import { type CallerName, callerNames, isCallerName, ServiceIdentity } from "./service-identity.js";

/**
 * Key material of service identities. A private key is an Ed25519 seed (32 bytes, base64); public keys
 * travel as `name:base64,...` (a name may appear twice while its key is being replaced). A whole set, one
 * private key per caller plus the public keys, is written as an env file: in a cluster it is the
 * Secret `avatar-service-identity` (`avatarctl identity generate`), on one machine DATA_DIR/keys.
 */

/** The process's own private key. */
export const IDENTITY_KEY_ENV = "SERVICE_IDENTITY_KEY";
/** Every caller's public key (services verify their callers with them). */
export const IDENTITY_PUBLIC_KEYS_ENV = "SERVICE_IDENTITY_PUBLIC_KEYS";
/** The entry of an identity set (and of the Secret) that holds the public keys. */
export const PUBLIC_KEYS_ENTRY = "public-keys";

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

export function privateKeyFromSeed(seed: string): KeyObject {
  const bytes = Buffer.from(seed.trim(), "base64");
  if (bytes.length !== 32 || bytes.toString("base64") !== seed.trim()) {
    throw new Error("a private key is 32 bytes in base64");
  }
  return createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, bytes]),
    format: "der",
    type: "pkcs8",
  });
}

/** The raw public key (32 bytes, base64) of a private key. */
export function publicKeyText(privateKey: KeyObject): string {
  const { x } = createPublicKey(privateKey).export({ format: "jwk" });
  return Buffer.from(x ?? "", "base64url").toString("base64");
}

function publicKeyFromText(text: string): KeyObject {
  const bytes = Buffer.from(text, "base64");
  if (bytes.length !== 32 || bytes.toString("base64") !== text) throw new Error("not 32 bytes in base64");
  return createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: bytes.toString("base64url") },
    format: "jwk",
  });
}

/** `name:base64,...` into keys per caller; throws an Error naming the first bad entry. */
export function parsePublicKeys(text: string): Map<CallerName, KeyObject[]> {
  const keys = new Map<CallerName, KeyObject[]>();
  for (const entry of text.split(",").map((e) => e.trim())) {
    if (!entry) continue;
    const [name = "", key = "", ...rest] = entry.split(":");
    if (!isCallerName(name) || rest.length > 0) {
      throw new Error(`"${entry.slice(0, 24)}" is not name:base64 with a name of ${callerNames.join(", ")}`);
    }
    try {
      keys.set(name, [...(keys.get(name) ?? []), publicKeyFromText(key)]);
    } catch (err) {
      throw new Error(`the key of ${name}: ${(err as Error).message}`);
    }
  }
  return keys;
}

/** One private key per caller and every public key: everything a deployment's processes need. */
export interface IdentitySet {
  privateKeys: Record<CallerName, string>;
  publicKeys: string;
}

export function generateIdentitySet(): IdentitySet {
  return completeIdentitySet({});
}

/** A set with the given private keys and fresh ones for every other caller; public keys of them all. */
function completeIdentitySet(known: Partial<Record<CallerName, string>>): IdentitySet {
  const privateKeys = Object.fromEntries(
    callerNames.map((name) => [name, known[name] || randomBytes(32).toString("base64")]),
  ) as Record<CallerName, string>;
  const publicKeys = callerNames
    .map((name) => `${name}:${publicKeyText(privateKeyFromSeed(privateKeys[name]))}`)
    .join(",");
  return { privateKeys, publicKeys };
}

/** The set as env-file lines (`gateway=...`, ..., `public-keys=...`), the Secret's keys. */
export function formatIdentitySet(set: IdentitySet): string {
  const lines = callerNames.map((name) => `${name}=${set.privateKeys[name]}`);
  return `${[...lines, `${PUBLIC_KEYS_ENTRY}=${set.publicKeys}`].join("\n")}\n`;
}

function envEntries(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of text.split("\n")) {
    const at = line.indexOf("=");
    if (at > 0) entries.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return entries;
}

export function parseIdentitySet(text: string): IdentitySet {
  const entries = envEntries(text);
  const missing = [...callerNames, PUBLIC_KEYS_ENTRY].filter((name) => !entries.get(name));
  if (missing.length > 0) throw new Error(`no entry for ${missing.join(", ")}`);
  const privateKeys = Object.fromEntries(callerNames.map((n) => [n, entries.get(n) ?? ""]));
  return {
    privateKeys: privateKeys as Record<CallerName, string>,
    publicKeys: entries.get(PUBLIC_KEYS_ENTRY) ?? "",
  };
}

/** One identity of a set (in the one-process suite every service has its own). */
export function identityOf(set: IdentitySet, name: CallerName, now?: () => Date): ServiceIdentity {
  return identityFromKeys(name, set.privateKeys[name], set.publicKeys, now);
}

/** The environment that gives a separate process its identity from a set. */
export function identityEnv(set: IdentitySet, name: CallerName): Record<string, string> {
  return { [IDENTITY_KEY_ENV]: set.privateKeys[name], [IDENTITY_PUBLIC_KEYS_ENV]: set.publicKeys };
}

/** An identity from its private key and the callers' public keys (none for a process that serves nothing). */
export function identityFromKeys(
  name: CallerName,
  privateKeyText: string,
  publicKeysText = "",
  now?: () => Date,
): ServiceIdentity {
  const problems: string[] = [];
  let privateKey: KeyObject | undefined;
  let publicKeys = new Map<CallerName, KeyObject[]>();
  try {
    privateKey = privateKeyFromSeed(privateKeyText);
  } catch (err) {
    problems.push(`${IDENTITY_KEY_ENV} (${name}): ${(err as Error).message}`);
  }
  try {
    publicKeys = parsePublicKeys(publicKeysText);
  } catch (err) {
    problems.push(`${IDENTITY_PUBLIC_KEYS_ENV}: ${(err as Error).message}`);
  }
  const own = publicKeys.get(name);
  if (privateKey && own && !own.some((k) => k.equals(createPublicKey(privateKey)))) {
    problems.push(
      `${IDENTITY_KEY_ENV} is not ${name}'s key: its public key is not in ${IDENTITY_PUBLIC_KEYS_ENV}`,
    );
  }
  if (!privateKey || problems.length > 0) throw new ConfigError(problems);
  return new ServiceIdentity({ self: name, privateKey, publicKeys }, now);
}

/**
 * A process's identity: SERVICE_IDENTITY_KEY and SERVICE_IDENTITY_PUBLIC_KEYS when set (a service needs
 * both; a caller that serves nothing, the gateway or avatarctl, only its key). Without them, the set in
 * DATA_DIR/keys, generated once: it suits processes sharing one machine, never replicas elsewhere.
 */
export function identityFromEnv(
  name: CallerName,
  env: Env,
  log: Logger,
  options: { verifiesCallers: boolean },
): ServiceIdentity {
  const key = env[IDENTITY_KEY_ENV]?.trim();
  const publicKeys = env[IDENTITY_PUBLIC_KEYS_ENV]?.trim() ?? "";
  if (key) {
    if (options.verifiesCallers && !publicKeys) {
      throw new ConfigError([
        `${IDENTITY_PUBLIC_KEYS_ENV} is required with ${IDENTITY_KEY_ENV}: the callers' keys`,
      ]);
    }
    return identityFromKeys(name, key, publicKeys);
  }
  if (publicKeys) throw new ConfigError([`${IDENTITY_KEY_ENV} is required with ${IDENTITY_PUBLIC_KEYS_ENV}`]);
  return identityOf(localIdentitySet(env.DATA_DIR || ".data", log), name);
}

export function localIdentityFile(dataDir: string): string {
  return path.resolve(dataDir, "keys", "service-identity.env");
}

/**
 * The machine's identity set under DATA_DIR/keys, created by whichever process needs it first; a set
 * written before a caller existed (a new service) gets that caller's key added.
 */
export function localIdentitySet(dataDir: string, log: Logger): IdentitySet {
  const file = localIdentityFile(dataDir);
  if (existsSync(file)) {
    const entries = envEntries(readFileSync(file, "utf8"));
    const missing = callerNames.filter((name) => !entries.get(name));
    if (missing.length > 0 && missing.length < callerNames.length) {
      const known = Object.fromEntries(callerNames.map((n) => [n, entries.get(n) ?? ""]));
      const draft = `${file}.${process.pid}.tmp`;
      writeFileSync(draft, formatIdentitySet(completeIdentitySet(known)), { mode: 0o600 });
      renameSync(draft, file);
      log.warn("added service identities to the local set", { file, added: missing });
    }
  }
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // Written whole under another name, then linked: processes starting together all read one set.
    const draft = `${file}.${process.pid}.tmp`;
    writeFileSync(draft, formatIdentitySet(generateIdentitySet()), { mode: 0o600 });
    try {
      linkSync(draft, file);
      log.warn("generated local service identities; set SERVICE_IDENTITY_KEY when running replicas", {
        file,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      rmSync(draft, { force: true });
    }
  }
  try {
    return parseIdentitySet(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message} (delete it to generate a new set)`]);
  }
}
