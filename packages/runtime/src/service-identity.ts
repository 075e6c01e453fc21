import type { KeyObject } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { decodeJwt, errors, jwtVerify, SignJWT } from "jose";
import { errorDetailOf, forbidden, unauthenticated } from "./errors.js";
import type { Logger } from "./log.js";
import { requestIdOf } from "./request-id.js";
import { VerifiedTokens } from "./verified-tokens.js";

/**
 * Service identity: every internal Connect call carries a short-lived token signed with the caller's
 * own Ed25519 key (a JWT: iss = the caller, aud = the callee's proto service); the callee verifies it with
 * the callers' public keys and checks the RPC's allow-list (service-callers.ts).
 *
 * Why per-caller key pairs rather than one shared HMAC key: whoever holds a shared key can sign as anyone,
 * so the allow-lists would be only as strong as the weakest pod. Here a pod holds only its own private
 * key; the operator CLI's key lives in no pod of the suite. Why not mTLS: it needs a CA, certificates per
 * pod and their rotation, in the cluster and in the one-process suite alike; tokens need one Secret.
 * Tokens do not encrypt traffic: put TLS (or a mesh) under it where the network is not trusted.
 */

/** The identities that call internal services: the services, the gateway and the operator CLI. */
export const callerNames = [
  "gateway",
  "tokens",
  "sessions",
  "catalog",
  "agents",
  "memory",
  "pipeline",
  "webhooks",
  "avatarctl",
] as const;
export type CallerName = (typeof callerNames)[number];

export function isCallerName(name: string): name is CallerName {
  return (callerNames as readonly string[]).includes(name);
}

export const SERVICE_TOKEN_TYPE = "avatar-service+jwt";
/** The ErrorDetail reason of a refused service credential (a deployment fault, never a user's). */
export const IDENTITY_REFUSED = "SERVICE_IDENTITY_REFUSED";
const ALG = "EdDSA";
const LIFETIME_S = 60;
/** A cached credential is replaced when less than this is left of it. */
const RENEW_BEFORE_S = 30;
/** Allowed difference between the clocks of caller and callee. */
const CLOCK_TOLERANCE_S = 30;

export interface IdentityKeys {
  self: CallerName;
  privateKey: KeyObject;
  /** The public keys of every caller (several per name while a key is being replaced). */
  publicKeys: ReadonlyMap<CallerName, readonly KeyObject[]>;
}

export class ServiceIdentity {
  private readonly issued = new Map<string, { token: string; exp: number }>();
  private readonly verified = new VerifiedTokens<CallerName>();

  constructor(
    private readonly keys: IdentityKeys,
    /** The clock tokens are stamped and judged on. */
    private readonly now: () => Date = () => new Date(),
  ) {}

  get name(): CallerName {
    return this.keys.self;
  }

  /** A bearer token for calls to `audience` (a proto service's type name), reused until close to expiry. */
  async credential(audience: string): Promise<string> {
    const nowS = this.seconds();
    const cached = this.issued.get(audience);
    if (cached && cached.exp - nowS > RENEW_BEFORE_S) return cached.token;
    const exp = nowS + LIFETIME_S;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: ALG, typ: SERVICE_TOKEN_TYPE, kid: this.keys.self })
      .setIssuer(this.keys.self)
      .setAudience(audience)
      .setIssuedAt(nowS)
      .setExpirationTime(exp)
      .sign(this.keys.privateKey);
    this.issued.set(audience, { token, exp });
    return token;
  }

  /** The caller behind an `authorization` header for a call to `audience`; throws Unauthenticated. */
  async verify(authorization: string | null, audience: string): Promise<CallerName> {
    const token = /^Bearer (\S+)$/.exec(authorization ?? "")?.[1];
    if (!token) throw refused(unauthenticated, "missing service credential");
    const nowS = this.seconds();
    const key = `${audience} ${token}`;
    const known = this.verified.get(key, nowS);
    if (known) return known;

    let issuer: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      throw refused(unauthenticated, "invalid service credential: not a JWT");
    }
    const publicKeys = issuer && isCallerName(issuer) ? this.keys.publicKeys.get(issuer) : undefined;
    if (!issuer || !isCallerName(issuer) || !publicKeys?.length) {
      throw refused(unauthenticated, `invalid service credential: unknown caller ${JSON.stringify(issuer)}`);
    }
    let reason = "bad signature";
    for (const publicKey of publicKeys) {
      try {
        const { payload } = await jwtVerify(token, publicKey, {
          algorithms: [ALG],
          typ: SERVICE_TOKEN_TYPE,
          issuer,
          audience,
          requiredClaims: ["iat", "exp"],
          currentDate: new Date(nowS * 1000),
          clockTolerance: CLOCK_TOLERANCE_S,
          // A token signed for longer than the lifetime still ages out: a leaked one is short-lived.
          maxTokenAge: LIFETIME_S,
        });
        const exp = Math.min(payload.exp ?? nowS, (payload.iat ?? nowS) + LIFETIME_S);
        this.verified.set(key, issuer, exp + CLOCK_TOLERANCE_S, nowS);
        return issuer;
      } catch (err) {
        if (!(err instanceof errors.JWSSignatureVerificationFailed)) {
          reason = err instanceof errors.JOSEError ? err.code : "unreadable";
          break;
        }
      }
    }
    throw refused(unauthenticated, `invalid service credential from ${issuer}: ${reason}`);
  }

  private seconds(): number {
    return Math.floor(this.now().getTime() / 1000);
  }
}

function refused(
  make: (message: string, detail: { reason: string }) => ConnectError,
  message: string,
): ConnectError {
  return make(message, { reason: IDENTITY_REFUSED });
}

/**
 * Client side: every call carries the caller's credential for the service it calls. A refusal of that
 * credential is the deployment's fault, not the request's: it reaches the caller as an internal error
 * (so the gateway never turns it into a 401 or 403 of the public API), with the callee's words.
 */
export function presentIdentity(identity: ServiceIdentity): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${await identity.credential(req.service.typeName)}`);
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError && errorDetailOf(err)?.reason === IDENTITY_REFUSED) {
        const code = Code[err.code];
        throw new ConnectError(
          `${req.service.name}/${req.method.name} refused ${identity.name}'s service identity (${code}): ${err.rawMessage}`,
          Code.Internal,
          undefined,
          undefined,
          err,
        );
      }
      throw err;
    }
  };
}

/**
 * Server side: a call without a valid credential gets Unauthenticated, a caller not on the RPC's
 * allow-list PermissionDenied; the handler runs only for an allowed caller.
 */
export function requireCaller(
  identity: ServiceIdentity,
  allowed: (serviceTypeName: string, methodName: string) => readonly CallerName[],
  log: Logger,
): Interceptor {
  return (next) => async (req) => {
    const procedure = `${req.service.name}/${req.method.name}`;
    try {
      const caller = await identity.verify(req.header.get("authorization"), req.service.typeName);
      if (!allowed(req.service.typeName, req.method.name).includes(caller)) {
        throw refused(forbidden, `${caller} may not call ${procedure}`);
      }
    } catch (err) {
      if (err instanceof ConnectError)
        log.warn("service call refused", {
          procedure,
          reason: err.rawMessage,
          request_id: requestIdOf(req.contextValues),
        });
      throw err;
    }
    return next(req);
  };
}
