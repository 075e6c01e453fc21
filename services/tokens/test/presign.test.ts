import { createHash, generateKeyPairSync, verify } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createLogger, silentLogger } from "@avatar/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { P256_ORDER, presignatures, privateScalar, signPresigned } from "../src/presign/p256.js";
import { Es256Presigner } from "../src/presign/presigner.js";
import { waitFor } from "./support.js";

const keys = () => generateKeyPairSync("ec", { namedCurve: "P-256" });
const verifies = (publicKey: ReturnType<typeof keys>["publicKey"], input: Buffer, signature: Buffer) =>
  verify("sha256", input, { key: publicKey, dsaEncoding: "ieee-p1363" }, signature);
const input = (i: number) => Buffer.from(`header.payload-${i}`);

describe("ES256 presignatures (p256.ts)", () => {
  it("sign what the public key verifies, over that input only", () => {
    const { publicKey, privateKey } = keys();
    const batch = presignatures(privateScalar(privateKey), 64);
    batch.forEach((p, i) => {
      const signature = signPresigned(p, input(i));
      expect(signature).toHaveLength(64);
      expect(verifies(publicKey, input(i), signature as Buffer)).toBe(true);
      expect(verifies(publicKey, input(i + 1), signature as Buffer)).toBe(false);
    });
    // Each presignature has a nonce of its own.
    expect(new Set(batch.map((p) => p.rHex)).size).toBe(64);
  });

  it("made for another key, give signatures this key does not verify", () => {
    const { publicKey } = keys();
    const [p] = presignatures(privateScalar(keys().privateKey), 1);
    expect(verifies(publicKey, input(0), signPresigned(p as never, input(0)) as Buffer)).toBe(false);
  });

  it("give no signature when s would be 0, where ECDSA takes another nonce", () => {
    const [p] = presignatures(privateScalar(keys().privateKey), 1);
    if (!p) throw new Error("no presignature");
    // v chosen so that u·z + v = 0 (mod n) for this input's z.
    const z = BigInt(`0x${createHash("sha256").update(input(0)).digest("hex")}`);
    const v = (P256_ORDER - ((p.u * z) % P256_ORDER)) % P256_ORDER;
    expect(signPresigned({ ...p, v }, input(0))).toBeUndefined();
  });

  it("refuse a key that is not P-256", () => {
    const ed = generateKeyPairSync("ed25519").privateKey;
    expect(() => privateScalar(ed)).toThrow(/P-256/);
  });
});

describe("Es256Presigner", () => {
  const log = silentLogger;
  let presigner: Es256Presigner | undefined;
  afterEach(async () => {
    await presigner?.close();
  });

  it("signs with crypto.sign until the thread's first batch, then from presignatures, each used once", async () => {
    const { publicKey, privateKey } = keys();
    presigner = new Es256Presigner(privateKey, { poolSize: 16, log });
    const first = presigner.sign(input(0));
    expect(presigner.counts).toEqual({ presigned: 0, direct: 1 });
    expect(verifies(publicKey, input(0), first)).toBe(true);

    const rs = new Set<string>();
    for (let i = 1; i <= 64; i++) {
      await waitFor("presignatures", () => (presigner?.ready ?? 0) > 0);
      const signature = presigner.sign(input(i));
      expect(verifies(publicKey, input(i), signature)).toBe(true);
      rs.add(signature.subarray(0, 32).toString("hex"));
    }
    expect(presigner.counts).toEqual({ presigned: 64, direct: 1 });
    // 64 signatures from a pool of 16: it was refilled, and no nonce came back.
    expect(rs.size).toBe(64);
    // Topped up in batches to the pool's size, and no further.
    await waitFor("a full pool", () => presigner?.ready === 16);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(presigner.ready).toBe(16);
  });

  it("stops a thread whose full pool rests, keeps the presignatures, and starts another as they are used", async () => {
    const { publicKey, privateKey } = keys();
    presigner = new Es256Presigner(privateKey, { poolSize: 8, log, idleMs: 50 });
    presigner.sign(input(0));
    await waitFor("a full pool", () => presigner?.ready === 8);
    await waitFor("the thread to stop", () => presigner?.threadRunning === false);
    expect(presigner.ready).toBe(8);
    for (let i = 1; i <= 8; i++) {
      expect(verifies(publicKey, input(i), presigner.sign(input(i)))).toBe(true);
      await waitFor("presignatures", () => (presigner?.ready ?? 0) > 0);
    }
    expect(presigner.counts).toEqual({ presigned: 8, direct: 1 });
    await waitFor("the pool topped up again", () => presigner?.ready === 8);
  });

  it("keeps signing on the caller's thread when the thread fails, and says so once", async () => {
    const { publicKey, privateKey } = keys();
    const broken = path.join(tmpdir(), `presign-broken-${process.pid}.mjs`);
    await writeFile(broken, 'throw new Error("no presigning here");\n');
    const warnings: string[] = [];
    const watching = createLogger({ level: "warn", sink: (line) => void warnings.push(line) });
    presigner = new Es256Presigner(privateKey, {
      poolSize: 8,
      log: watching,
      workerUrl: pathToFileURL(broken),
    });
    presigner.sign(input(0));
    await waitFor("the warning", () => warnings.length > 0);
    for (let i = 1; i <= 20; i++) expect(verifies(publicKey, input(i), presigner.sign(input(i)))).toBe(true);
    expect(presigner.counts).toEqual({ presigned: 0, direct: 21 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("no presigning here");
    await rm(broken);
  });

  it("after close signs with crypto.sign and forgets what it had", async () => {
    const { publicKey, privateKey } = keys();
    presigner = new Es256Presigner(privateKey, { poolSize: 8, log });
    presigner.sign(input(0));
    await waitFor("presignatures", () => (presigner?.ready ?? 0) > 0);
    await presigner.close();
    expect(presigner.ready).toBe(0);
    expect(verifies(publicKey, input(1), presigner.sign(input(1)))).toBe(true);
    expect(presigner.counts.direct).toBe(2);
    expect(presigner.ready).toBe(0);
  });
});
