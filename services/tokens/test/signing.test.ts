import { createMemoryBus } from "@avatar/bus";
import { SessionMode } from "@avatar/contracts/common";
import { type GetSigningKeysResponse, TokensService } from "@avatar/contracts/tokens";
import {
  InvalidSessionTokenError,
  SESSION_TOKEN_ISSUER,
  silentLogger,
  verifySessionToken,
} from "@avatar/runtime";
import { callDirectly } from "@avatar/testkit";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { decodeProtectedHeader, importJWK, type JSONWebKeySet, type JWK, SignJWT } from "jose";
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installSigningKey } from "../src/repository.js";
import { tokensAdminService } from "../src/service.js";
import { newSigningKey, RETIRED_KEY_GRACE_MS, type SessionTokenSigner } from "../src/signing-keys.js";
import { cachedSpaces } from "../src/space-cache.js";
import {
  clearTokens,
  failure,
  newSigner,
  openTokensDb,
  sessionClaims,
  signWith,
  type TokensTestDb,
  testSealer,
  waitFor,
} from "./support.js";

let t: TokensTestDb;
const sealer = testSealer();
let signer: SessionTokenSigner;

beforeAll(async () => {
  t = await openTokensDb();
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await clearTokens(t.db);
  signer = newSigner(t.db, sealer);
});

const service = () =>
  callDirectly(
    TokensService,
    tokensAdminService(t.db, signer, cachedSpaces(t.db, undefined), createMemoryBus()),
  );

/** The key set a gateway builds from GetSigningKeys. */
function keySet(res: GetSigningKeysResponse): JSONWebKeySet {
  return { keys: res.keys.map((k) => ({ ...(JSON.parse(k.publicJwk) as JWK), kid: k.kid, alg: k.alg })) };
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

async function invalid(promise: Promise<unknown>): Promise<InvalidSessionTokenError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidSessionTokenError);
  return err as InvalidSessionTokenError;
}

describe("SessionTokenSigner", () => {
  it("creates one current ES256 key (P-256), its private half sealed", async () => {
    const first = await signer.ensureKey();
    expect(await signer.ensureKey()).toEqual(first);
    expect(first).toMatchObject({ alg: "ES256", current: true, retired_at: null });
    expect(first.public_jwk).toMatchObject({ kty: "EC", crv: "P-256" });
    expect(first.public_jwk).not.toHaveProperty("d");

    const privateJwk = JSON.parse(sealer.open(first.private_jwk_sealed, `signing_key:${first.kid}`)) as JWK;
    expect(privateJwk.d).toBeTruthy();
    expect(first.private_jwk_sealed).toMatch(/^v1\.test\./);
    expect(first.private_jwk_sealed).not.toContain(privateJwk.d);
    // A process with another encryption key cannot sign with it.
    await expect(signWith(newSigner(t.db), sessionClaims())).rejects.toThrow();
  });

  it("signs tokens that the published keys verify, with the claims intact", async () => {
    const claims = sessionClaims();
    const token = await signWith(signer, claims);
    const keys = keySet(await service().getSigningKeys());
    expect(keys.keys).toHaveLength(1);
    expect(kidOf(token)).toBe(keys.keys[0]?.kid);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: "ES256", typ: "JWT" });
    // JWS's ECDSA signature is r || s: 64 bytes, not the DER sequence node:crypto gives by default.
    expect(Buffer.from(token.split(".")[2] ?? "", "base64url")).toHaveLength(64);
    const verified = await verifySessionToken(token, keys, new Date());
    expect(verified).toMatchObject({ ...claims, iss: SESSION_TOKEN_ISSUER, aud: "avatar-session" });
    expect(verified.iat).toBeGreaterThan(0);
  });

  it("gives tokens that the verifier refuses when expired, tampered or signed by an unknown key", async () => {
    const keys = keySet(await service().getSigningKeys());
    const exp = Math.floor(Date.now() / 1000) + 60;
    const token = await signWith(signer, sessionClaims({ exp }));
    await invalid(verifySessionToken(token, keys, new Date((exp + 1) * 1000)));

    const [header, payload, signature] = token.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...claims, space_id: "another" })).toString("base64url");
    expect(
      (await invalid(verifySessionToken(`${header}.${forged}.${signature}`, keys, new Date()))).unknownKey,
    ).toBe(false);

    const otherDb = await openTokensDb();
    try {
      const stranger = await signWith(newSigner(otherDb.db), sessionClaims());
      expect((await invalid(verifySessionToken(stranger, keys, new Date()))).unknownKey).toBe(true);
    } finally {
      await otherDb.close();
    }
  });

  it("gives tokens meant only for session use: another audience is refused", async () => {
    const row = await signer.ensureKey();
    const jwk = JSON.parse(sealer.open(row.private_jwk_sealed, `signing_key:${row.kid}`)) as JWK;
    const elsewhere = await new SignJWT({ ...sessionClaims() })
      .setProtectedHeader({ alg: row.alg, kid: row.kid })
      .setIssuer(SESSION_TOKEN_ISSUER)
      .setAudience("some-other-service")
      .sign(await importJWK(jwk, row.alg));
    await invalid(verifySessionToken(elsewhere, keySet(await service().getSigningKeys()), new Date()));
  });

  it("after rotation signs with the new key while tokens of the old key still verify", async () => {
    const before = await signWith(signer, sessionClaims());
    const oldKid = kidOf(before);
    const rotated = await service().rotateSigningKey();
    expect(rotated.key).toMatchObject({ current: true, alg: "ES256" });
    expect(rotated.key?.kid).not.toBe(oldKid);

    const after = await signWith(signer, sessionClaims());
    expect(kidOf(after)).toBe(rotated.key?.kid);

    const listed = await service().getSigningKeys();
    expect(listed.keys.map((k) => [k.kid, k.current])).toEqual([
      [rotated.key?.kid, true],
      [oldKid, false],
    ]);
    // The old key's grace period starts now.
    const oldRow = await t.db
      .selectFrom("signing_keys")
      .selectAll()
      .where("kid", "=", oldKid ?? "")
      .executeTakeFirst();
    expect(oldRow?.retired_at).toBeInstanceOf(Date);
    const keys = keySet(listed);
    expect((await verifySessionToken(before, keys, new Date())).sub).toBe(sessionClaims().sub);
    expect((await verifySessionToken(after, keys, new Date())).sub).toBe(sessionClaims().sub);
  });

  it("with presignatures signs from its pool once it is ready, and a rotation starts a pool of the new key", async () => {
    const presigning = newSigner(t.db, sealer, { presign: { poolSize: 8, log: silentLogger } });
    const verified = async (token: string) =>
      (await verifySessionToken(token, keySet(await service().getSigningKeys()), new Date())).sub;
    const pooled = async () => {
      await waitFor("presignatures", () => (presigning.presigning?.ready ?? 0) > 0);
      return signWith(presigning, sessionClaims());
    };
    try {
      const first = await signWith(presigning, sessionClaims());
      const second = await pooled();
      expect(presigning.presigning).toMatchObject({ presigned: 1, direct: 1 });
      expect(await verified(first)).toBe(sessionClaims().sub);
      expect(await verified(second)).toBe(sessionClaims().sub);

      const rotated = await presigning.rotate();
      const afterRotation = await signWith(presigning, sessionClaims());
      expect(presigning.presigning).toMatchObject({ presigned: 0, direct: 1 });
      const pooledAfterRotation = await pooled();
      expect(presigning.presigning).toMatchObject({ presigned: 1, direct: 1 });
      for (const token of [afterRotation, pooledAfterRotation]) {
        expect(kidOf(token)).toBe(rotated.kid);
        expect(await verified(token)).toBe(sessionClaims().sub);
      }
    } finally {
      await presigning.close();
    }
    expect(presigning.presigning).toBeUndefined();
  });

  it("keeps signing with an EdDSA key made before ES256 until a rotation moves it to ES256", async () => {
    const earlier = await installSigningKey(t.db, newSigningKey(sealer, "EdDSA"), true, new Date());
    expect(earlier.public_jwk).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    const before = await signWith(signer, sessionClaims());
    expect(decodeProtectedHeader(before)).toMatchObject({ alg: "EdDSA", kid: earlier.kid });

    const rotated = await service().rotateSigningKey();
    expect(rotated.key?.alg).toBe("ES256");
    const after = await signWith(signer, sessionClaims());
    expect(decodeProtectedHeader(after)).toMatchObject({ alg: "ES256", kid: rotated.key?.kid });

    // Gateways hold both keys within the grace period: tokens of either verify.
    const keys = keySet(await service().getSigningKeys());
    for (const token of [before, after]) {
      expect((await verifySessionToken(token, keys, new Date())).sub).toBe(sessionClaims().sub);
    }
  });

  it("refuses to make or sign with a key of an algorithm verifiers do not accept", async () => {
    expect(() => newSigningKey(sealer, "RS256")).toThrow(/RS256/);
    const key = newSigningKey(sealer);
    await installSigningKey(t.db, { ...key, alg: "HS256" }, true, new Date());
    await expect(signWith(signer, sessionClaims())).rejects.toThrow(/HS256/);
  });

  it("notices a rotation made by another replica once its refresh interval has passed", async () => {
    let now = 1_000_000;
    const mine = newSigner(t.db, sealer, { refreshMs: 5_000, now: () => now });
    const first = await signWith(mine, sessionClaims());
    const rotatedRow = await newSigner(t.openPool(), sealer).rotate();

    now += 4_999; // within the interval: the key it had, retired but still verifying
    const stale = await signWith(mine, sessionClaims());
    expect(kidOf(stale)).toBe(kidOf(first));
    expect((await verifySessionToken(stale, keySet(await service().getSigningKeys()), new Date())).sub).toBe(
      sessionClaims().sub,
    );

    now += 1;
    const next = await signWith(mine, sessionClaims());
    expect(kidOf(next)).toBe(rotatedRow.kid);
    expect(kidOf(next)).not.toBe(kidOf(first));
  });

  it("reads the current key once per refresh interval, not once per token", async () => {
    let now = 1_000_000;
    let reads = 0;
    const counting = t.db.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === "SelectQueryNode") reads++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const mine = newSigner(counting, sealer, { refreshMs: 5_000, now: () => now });
    await signWith(mine, sessionClaims());
    expect(reads).toBeGreaterThan(0);
    reads = 0;
    for (let i = 0; i < 20; i++) await signWith(mine, sessionClaims());
    expect(reads).toBe(0);
    now += 5_000;
    await signWith(mine, sessionClaims());
    expect(reads).toBe(1);
  });

  it("stops publishing a retired key once its grace period is over", async () => {
    const old = await signWith(signer, sessionClaims());
    await signer.rotate();
    const graceSeconds = RETIRED_KEY_GRACE_MS / 1000;
    await t.db
      .updateTable("signing_keys")
      .set({ retired_at: sql`now() - make_interval(secs => ${graceSeconds + 60})` })
      .where("kid", "=", kidOf(old) ?? "")
      .execute();
    const keys = keySet(await service().getSigningKeys());
    expect(keys.keys.map((k) => k.kid)).not.toContain(kidOf(old));
    expect((await invalid(verifySessionToken(old, keys, new Date()))).unknownKey).toBe(true);
    await failure(service().verifySessionToken({ sessionToken: old }));
  });

  it("keeps publishing a retired key within its grace period", async () => {
    const old = await signWith(signer, sessionClaims());
    await signer.rotate();
    await t.db
      .updateTable("signing_keys")
      .set({ retired_at: sql`now() - make_interval(secs => ${RETIRED_KEY_GRACE_MS / 1000 - 60})` })
      .where("kid", "=", kidOf(old) ?? "")
      .execute();
    expect((await service().getSigningKeys()).keys.map((k) => k.kid)).toContain(kidOf(old));
  });

  it("lets replicas starting together create exactly one current key", async () => {
    // All replicas find no key and reach the install step together: a connection holding the install
    // lock (as a replica in the middle of installing would) keeps them there until all have arrived.
    const holder = t.openPool();
    const rows = await holder.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(hashtext('avatar.tokens.signing_key'))`.execute(conn);
      const replicas = [0, 1, 2].map(() => newSigner(t.openPool(), sealer));
      const starting = Promise.all(replicas.map((r) => r.ensureKey()));
      try {
        await waitFor("every replica to wait for the install lock", async () => {
          const { rows } = await sql<{ n: string }>`
            select count(*) as n from pg_locks
            where locktype = 'advisory' and not granted
              and database = (select oid from pg_database where datname = current_database())
          `.execute(conn);
          return Number(rows[0]?.n) === replicas.length;
        });
      } finally {
        await sql`select pg_advisory_unlock(hashtext('avatar.tokens.signing_key'))`.execute(conn);
      }
      return starting;
    });
    expect(new Set(rows.map((r) => r.kid)).size).toBe(1);
    const stored = await t.db.selectFrom("signing_keys").select(["kid", "current"]).execute();
    expect(stored).toEqual([{ kid: rows[0]?.kid, current: true }]);
  });
});

describe("VerifySessionToken", () => {
  it("returns the claims of a valid token", async () => {
    const claims = sessionClaims();
    const res = await service().verifySessionToken({ sessionToken: await signWith(signer, claims) });
    expect(res.claims).toMatchObject({
      sessionId: claims.sub,
      spaceId: claims.space_id,
      apiKeyId: claims.api_key_id,
      mode: SessionMode.LITE,
      isSandbox: true,
    });
    expect(res.claims?.expiresAt && timestampMs(res.claims.expiresAt)).toBe(claims.exp * 1000);
  });

  it("maps FULL mode", async () => {
    const claims = sessionClaims();
    claims.start_session_data = { ...claims.start_session_data, mode: "FULL", is_sandbox: false };
    const res = await service().verifySessionToken({ sessionToken: await signWith(signer, claims) });
    expect(res.claims).toMatchObject({ mode: SessionMode.FULL, isSandbox: false });
  });

  it("answers Unauthenticated for a forged, expired or malformed token", async () => {
    const token = await signWith(signer, sessionClaims());
    const [header, payload] = token.split(".") as [string, string, string];
    const expired = await signWith(signer, sessionClaims({ exp: Math.floor(Date.now() / 1000) - 10 }));
    for (const sessionToken of [`${header}.${payload}.${"A".repeat(86)}`, expired, "garbage", ""]) {
      const err = await failure(service().verifySessionToken({ sessionToken }));
      expect(err.code).toBe(Code.Unauthenticated);
      expect(err.rawMessage).toBe("invalid session token");
    }
  });
});
