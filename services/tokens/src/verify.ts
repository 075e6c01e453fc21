import { SessionMode } from "@avatar/contracts/common";
import { type SessionTokenClaims, SessionTokenClaimsSchema } from "@avatar/contracts/tokens";
import { InvalidSessionTokenError, verifySessionToken } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { SessionTokenSigner } from "./signing-keys.js";

/**
 * Verifies a session token against the keys in the database, on the signer's clock (the one that
 * stamped it); null when it is not valid.
 */
export async function verifyWithDatabaseKeys(
  signer: Pick<SessionTokenSigner, "verifyingKeys" | "now">,
  token: string,
): Promise<SessionTokenClaims | null> {
  const rows = await signer.verifyingKeys();
  const keys = rows.map((r) => ({ ...r.public_jwk, kid: r.kid, alg: r.alg }));
  try {
    const c = await verifySessionToken(token, { keys }, new Date(signer.now()));
    return create(SessionTokenClaimsSchema, {
      sessionId: c.sub,
      spaceId: c.space_id,
      apiKeyId: c.api_key_id,
      expiresAt: timestampFromMs(c.exp * 1000),
      mode: c.start_session_data.mode === "LITE" ? SessionMode.LITE : SessionMode.FULL,
      isSandbox: c.start_session_data.is_sandbox,
    });
  } catch (err) {
    if (err instanceof InvalidSessionTokenError) return null;
    throw err;
  }
}
