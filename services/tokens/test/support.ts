/** Shared setup of the tokens tests: a migrated `tokens` schema, a sealer and a signer. */
import { randomBytes } from "node:crypto";
import { createSealer, type Sealer, type SessionTokenClaims } from "@avatar/runtime";
import { openServiceDb, type ServiceTestDb } from "@avatar/testkit";
import { ConnectError } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import type { UnsignedClaims } from "../src/claims.js";
import { migrations } from "../src/migrations/index.js";
import type { TokensDatabase } from "../src/schema.js";
import { SessionTokenSigner, type SignerOptions } from "../src/signing-keys.js";

export type TokensTestDb = ServiceTestDb<TokensDatabase>;

/** A database of this test file with the tokens schema migrated. */
export const openTokensDb = (): Promise<TokensTestDb> => openServiceDb<TokensDatabase>("tokens", migrations);

/** Empties the tables between tests. */
export async function clearTokens(db: Kysely<TokensDatabase>): Promise<void> {
  await db.deleteFrom("api_keys").execute();
  await db.deleteFrom("spaces").execute();
  await db.deleteFrom("signing_keys").execute();
}

export function testSealer(): Sealer {
  return createSealer([{ id: "test", key: randomBytes(32) }], "test");
}

export function newSigner(
  db: Kysely<TokensDatabase>,
  sealer: Sealer = testSealer(),
  options?: SignerOptions,
): SessionTokenSigner {
  return new SessionTokenSigner(db, sealer, options);
}

/** A token of `claims` as a mint signs it: the signer's current key, found first (`signing`). */
export async function signWith(signer: SessionTokenSigner, claims: UnsignedClaims): Promise<string> {
  return (await signer.signing())(claims);
}

/** The claims the minting code gives a session token (the signer adds iss, aud and iat). */
export type TestClaims = Pick<
  SessionTokenClaims,
  "sub" | "space_id" | "api_key_id" | "exp" | "start_session_data"
>;

/** Claims of a session token as the minting code builds them; `exp` ten minutes ahead unless given. */
export function sessionClaims(fields: Partial<TestClaims> = {}): TestClaims {
  return {
    sub: "3f2b8c1e-0000-4000-8000-00000000aaaa",
    space_id: "3f2b8c1e-0000-4000-8000-00000000bbbb",
    api_key_id: "3f2b8c1e-0000-4000-8000-00000000cccc",
    exp: Math.floor(Date.now() / 1000) + 600,
    start_session_data: {
      mode: "LITE",
      avatar_id: "3f2b8c1e-0000-4000-8000-00000000dddd",
      is_sandbox: true,
      video_settings: { quality: "high", encoding: "H264" },
      interactivity_type: "CONVERSATIONAL",
      agent_type: null,
    },
    ...fields,
  };
}

/** A fixed API key that passes the rules for operator-chosen keys. */
export function fixedApiKey(label = ""): string {
  return `demo_${label}${randomBytes(16).toString("hex")}`;
}

/** The ConnectError a call failed with; fails the test when it did not fail with one. */
export async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  const outcome = await promise.then(
    () => "resolved",
    (e: unknown) => e,
  );
  if (!(outcome instanceof ConnectError)) {
    throw new Error(
      `expected a ConnectError, got ${outcome === "resolved" ? "a response" : String(outcome)}`,
    );
  }
  return outcome;
}

export { waitFor } from "@avatar/testkit";
