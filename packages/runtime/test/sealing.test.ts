import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../src/config.js";
import { createSealer, parseSealingKeys, type SealingKey } from "../src/sealing.js";
import { sealerFromEnv } from "../src/sealing-config.js";
import { collectingLogger } from "./support.js";

const key = (id: string): SealingKey => ({ id, key: randomBytes(32) });
const entry = (k: SealingKey) => `${k.id}:${k.key.toString("base64")}`;

/** Changes one character of a base64url text to another valid one. */
function flipChar(text: string, at: number): string {
  const c = text[at] === "A" ? "B" : "A";
  return text.slice(0, at) + c + text.slice(at + 1);
}

describe("createSealer", () => {
  const k1 = key("k1");
  const sealer = createSealer([k1], "k1");

  it("opens what it sealed, for any text, and never shows the plaintext", () => {
    for (const text of ["secret-value", "", "ünïcødé ✓", "x".repeat(10_000)]) {
      const sealed = sealer.seal(text, "row-1");
      expect(sealed.startsWith("v1.k1.")).toBe(true);
      if (text) expect(sealed).not.toContain(text);
      expect(sealer.open(sealed, "row-1")).toBe(text);
    }
  });

  it("seals the same text differently every time", () => {
    expect(sealer.seal("same", "c")).not.toBe(sealer.seal("same", "c"));
  });

  it("does not open a value under another context (a value copied to another row)", () => {
    const sealed = sealer.seal("secret", "secret:1");
    expect(() => sealer.open(sealed, "secret:2")).toThrow();
  });

  it("does not open a tampered value", () => {
    const sealed = sealer.seal("secret", "ctx");
    const [format, kid, iv, body, tag] = sealed.split(".") as [string, string, string, string, string];
    const tampered = [
      [format, kid, flipChar(iv, 0), body, tag],
      [format, kid, iv, flipChar(body, 0), tag],
      [format, kid, iv, body, flipChar(tag, 0)],
      // A shortened tag must not be accepted: GCM would then check only its first bytes.
      [format, kid, iv, body, Buffer.from(tag, "base64url").subarray(0, 4).toString("base64url")],
      [format, kid, iv, body, ""],
    ];
    for (const parts of tampered) {
      expect(() => sealer.open(parts.join("."), "ctx"), parts.join(".")).toThrow();
    }
  });

  it("rejects what is not a sealed value", () => {
    for (const text of ["", "plain", "v1.k1", "v2.k1.a.b.c", "v1..a.b.c"]) {
      expect(() => sealer.open(text, "ctx"), text).toThrow("not a sealed value");
    }
  });

  it("rotates: new values use the new current key, old values still open with theirs", () => {
    const k2 = key("k2");
    const before = createSealer([k1], "k1").seal("old secret", "ctx");
    const rotated = createSealer([k1, k2], "k2");
    expect(rotated.currentKeyId).toBe("k2");
    expect(rotated.open(before, "ctx")).toBe("old secret");
    const after = rotated.seal("new secret", "ctx");
    expect(after.split(".")[1]).toBe("k2");
    // A process that does not know k2 yet cannot open it.
    expect(() => createSealer([k1], "k1").open(after, "ctx")).toThrow("sealed with unknown key k2");
  });

  it("does not open a value sealed with an unknown key, nor with a different key of the same id", () => {
    const sealed = createSealer([key("gone")], "gone").seal("s", "ctx");
    expect(() => sealer.open(sealed, "ctx")).toThrow("sealed with unknown key gone");
    const impostor = createSealer([key("k1")], "k1");
    expect(() => impostor.open(sealer.seal("s", "ctx"), "ctx")).toThrow();
  });

  it("rejects keys that are not 32 bytes, bad key ids and an unknown current key", () => {
    expect(() => createSealer([{ id: "short", key: randomBytes(16) }], "short")).toThrow(/must be 32 bytes/);
    expect(() => createSealer([{ id: "long", key: randomBytes(33) }], "long")).toThrow(/must be 32 bytes/);
    expect(() => createSealer([{ id: "has.dot", key: randomBytes(32) }], "has.dot")).toThrow(/is not/);
    expect(() => createSealer([k1], "k9")).toThrow("no sealing key with id k9");
  });
});

describe("parseSealingKeys", () => {
  it("reads id:base64 entries separated by commas, ignoring blanks and spaces", () => {
    const a = key("a");
    const b = key("b-2");
    expect(parseSealingKeys(` ${entry(a)} ,, ${entry(b)}\n`)).toEqual([a, b]);
  });

  it("rejects an entry without an id", () => {
    expect(() => parseSealingKeys("abcdef")).toThrow(/id:base64key/);
    expect(() => parseSealingKeys(":abcdef")).toThrow(/id:base64key/);
  });
});

describe("sealerFromEnv", () => {
  const dirs: string[] = [];
  const tempDataDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), "avatar-sealing-"));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("uses ENCRYPTION_KEYS, with the last key current unless ENCRYPTION_KEY_ID names one", () => {
    const { log } = collectingLogger();
    const a = key("a");
    const b = key("b");
    const keys = `${entry(a)},${entry(b)}`;
    const byLast = sealerFromEnv("svc", { ENCRYPTION_KEYS: keys }, log);
    expect(byLast.currentKeyId).toBe("b");
    const byName = sealerFromEnv("svc", { ENCRYPTION_KEYS: keys, ENCRYPTION_KEY_ID: "a" }, log);
    expect(byName.currentKeyId).toBe("a");
    // Both know both keys.
    expect(byLast.open(byName.seal("s", "c"), "c")).toBe("s");
    expect(createSealer([b], "b").open(byLast.seal("s", "c"), "c")).toBe("s");
  });

  it("turns a bad ENCRYPTION_KEYS into a ConfigError naming the setting", () => {
    const { log } = collectingLogger();
    const bad = [
      "nokey",
      `short:${randomBytes(16).toString("base64")}`,
      `bad.id:${randomBytes(32).toString("base64")}`,
    ];
    for (const value of bad) {
      let error: unknown;
      try {
        sealerFromEnv("svc", { ENCRYPTION_KEYS: value, DATA_DIR: tempDataDir() }, log);
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems[0]).toMatch(/^ENCRYPTION_KEYS must be/);
    }
    const k = key("k");
    expect(() =>
      sealerFromEnv("svc", { ENCRYPTION_KEYS: entry(k), ENCRYPTION_KEY_ID: "other" }, log),
    ).toThrow(ConfigError);
  });

  it("treats ENCRYPTION_KEYS with no entries as a ConfigError", () => {
    const { log } = collectingLogger();
    expect(() => sealerFromEnv("svc", { ENCRYPTION_KEYS: " , " }, log)).toThrow(ConfigError);
  });

  it("without ENCRYPTION_KEYS generates a key file in DATA_DIR once and reuses it", () => {
    const { log, records } = collectingLogger();
    const dataDir = tempDataDir();
    const file = path.join(dataDir, "keys", "svc.key");
    const first = sealerFromEnv("svc", { DATA_DIR: dataDir }, log);
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(records()).toEqual([
      expect.objectContaining({ level: "warn", file, msg: expect.stringContaining("ENCRYPTION_KEYS") }),
    ]);
    const content = readFileSync(file, "utf8");

    const second = sealerFromEnv("svc", { DATA_DIR: dataDir }, log);
    expect(readFileSync(file, "utf8")).toBe(content);
    expect(records()).toHaveLength(1);
    expect(second.open(first.seal("kept", "ctx"), "ctx")).toBe("kept");

    // Each service has its own file.
    const other = sealerFromEnv("other", { DATA_DIR: dataDir }, log);
    expect(() => other.open(first.seal("x", "ctx"), "ctx")).toThrow();
  });
});
