import { SignJWT } from "jose";
import { type ClaimGrants, claimsToJwtPayload } from "livekit-server-sdk";
import { grantFor, type TransportARole } from "./grants.js";
import type { TransportAConfig } from "./settings.js";

export interface TokenRequest {
  role: TransportARole;
  room: string;
  identity: string;
  /** How long the token admits its holder to the room, seconds from now. */
  ttlSeconds: number;
  name?: string;
  /** transportA's participant kind ("agent" for the avatar and a caller's agent). */
  kind?: "agent";
  attributes?: Record<string, string>;
}

/**
 * Room access tokens in transportA's format: the server SDK's claims (`claimsToJwtPayload` of its
 * grants) signed HS256 with the API secret, issuer = API key, subject = identity. The SDK's own
 * AccessToken reads the machine's clock for `nbf` and `exp`; this signer takes the clock it is given,
 * so `nbf` and `exp` agree with whoever judges the session's time.
 */
export class TransportATokens {
  private readonly secret: Uint8Array;

  constructor(
    private readonly config: Pick<TransportAConfig, "apiKey" | "apiSecret">,
    private readonly now: () => Date,
  ) {
    this.secret = new TextEncoder().encode(config.apiSecret);
  }

  async mint(request: TokenRequest): Promise<string> {
    if (!(request.ttlSeconds > 0)) throw new RangeError("ttlSeconds must be positive");
    const claims: ClaimGrants = { video: grantFor(request.role, request.room) };
    if (request.name) claims.name = request.name;
    if (request.kind) claims.kind = request.kind;
    if (request.attributes) claims.attributes = request.attributes;
    const nowSeconds = Math.floor(this.now().getTime() / 1000);
    return new SignJWT(claimsToJwtPayload(claims))
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(this.config.apiKey)
      .setSubject(request.identity)
      .setNotBefore(nowSeconds)
      .setExpirationTime(nowSeconds + Math.ceil(request.ttlSeconds))
      .sign(this.secret);
  }
}
