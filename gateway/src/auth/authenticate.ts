import { notAuthenticated, wrongCredential } from "../http/http-error.js";
import type { AuthPolicy, Principal } from "../http/route.js";
import type { ApiKeyAuthenticator, LookupGuard } from "./api-keys.js";
import type { PresentedCredentials } from "./credentials.js";
import type { SessionTokenVerifier } from "./session-tokens.js";

export interface Authenticators {
  apiKeys: ApiKeyAuthenticator;
  sessionTokens: SessionTokenVerifier;
}

/** What authentication does about failures of the client it serves (the failed-auth budget). */
export interface FailureGuard {
  /** Around asking the tokens service about an API key it does not know: may refuse (throws). */
  lookup: LookupGuard;
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
  if (policy === "none") return { kind: "anonymous" };

  const apiKey = async () => {
    const principal = c.apiKey ? await auth.apiKeys.authenticate(c.apiKey, guard?.lookup) : null;
    if (!principal) throw notAuthenticated();
    return principal;
  };
  const session = async (token: string | undefined) => {
    const principal = token ? await auth.sessionTokens.verify(token) : null;
    if (!principal) {
      if (token) await guard?.failed();
      throw notAuthenticated();
    }
    return principal;
  };

  switch (policy) {
    case "api_key":
      if (c.apiKey) return apiKey();
      if (c.bearer) {
        await session(c.bearer);
        throw wrongCredential(
          "This operation requires an API key (X-API-KEY); a session token cannot be used",
        );
      }
      throw notAuthenticated();
    case "session_token":
      if (c.bearer) return session(c.bearer);
      if (c.apiKey) {
        await apiKey();
        throw wrongCredential(
          "This operation requires a session token (Authorization: Bearer); an API key cannot be used",
        );
      }
      throw notAuthenticated();
    case "api_key_or_session":
      return c.apiKey ? apiKey() : session(c.bearer);
    case "api_key_or_cookie":
      return c.apiKey ? apiKey() : session(c.bearer ?? c.cookie);
  }
}
