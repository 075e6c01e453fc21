import { notAuthenticated, wrongCredential } from "../http/http-error.js";
import type { AuthPolicy, Principal } from "../http/route.js";
import type { ApiKeyAuthenticator, LookupGuard } from "./api-keys.js";
import type { PresentedCredentials } from "./credentials.js";
import type { SessionTokenVerifier } from "./session-tokens.js";

export interface Authenticators {
  apiKeys: ApiKeyAuthenticator;
  sessionTokens: SessionTokenVerifier;
}

/**
 * What authentication does about failures of the client it serves (the failed-auth budget): `lookup` goes
 * around asking the tokens service about an API key it does not know, and may refuse (throws).
 */
export interface FailureGuard extends LookupGuard {
  /** A session token turned out invalid (checked locally; API-key failures are counted by `lookup`). */
  failed(): Promise<void>;
}

/**
 * Applies a route's policy: a missing or invalid credential is 401; a valid credential of the wrong kind
 * (a session token where an API key is needed, or the reverse) is 403.
 */
export async function authenticate(
  policy: AuthPolicy,
  c: PresentedCredentials,
  auth: Authenticators,
  guard?: FailureGuard,
): Promise<Principal> {
  switch (policy) {
    case "none":
      return { kind: "anonymous" };
    case "api_key":
      if (c.apiKey) return byApiKey(c.apiKey, auth, guard);
      if (c.bearer) {
        await bySessionToken(c.bearer, auth, guard);
        throw wrongCredential(
          "This operation requires an API key (X-API-KEY); a session token cannot be used",
        );
      }
      throw notAuthenticated();
    case "session_token":
      if (c.bearer) return bySessionToken(c.bearer, auth, guard);
      if (c.apiKey) {
        await byApiKey(c.apiKey, auth, guard);
        throw wrongCredential(
          "This operation requires a session token (Authorization: Bearer); an API key cannot be used",
        );
      }
      throw notAuthenticated();
    case "api_key_or_session":
      return c.apiKey ? byApiKey(c.apiKey, auth, guard) : bySessionToken(c.bearer, auth, guard);
    case "api_key_or_cookie":
      return c.apiKey ? byApiKey(c.apiKey, auth, guard) : bySessionToken(c.bearer ?? c.cookie, auth, guard);
  }
}

async function byApiKey(apiKey: string, auth: Authenticators, guard: FailureGuard | undefined) {
  const principal = await auth.apiKeys.authenticate(apiKey, guard);
  if (!principal) throw notAuthenticated();
  return principal;
}

async function bySessionToken(
  token: string | undefined,
  auth: Authenticators,
  guard: FailureGuard | undefined,
) {
  const principal = token ? await auth.sessionTokens.verify(token) : null;
  if (!principal) {
    if (token) await guard?.failed();
    throw notAuthenticated();
  }
  return principal;
}
