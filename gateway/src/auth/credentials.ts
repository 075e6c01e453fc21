import type { IncomingMessage } from "node:http";
import { clientAddress, type ProxyTrust } from "../http/trusted-proxies.js";

/** The credentials a request presents, before any of them is checked. */
export interface PresentedCredentials {
  apiKey?: string;
  bearer?: string;
  /** The la_session cookie (a session token). */
  cookie?: string;
  clientIp: string;
}

export const SESSION_COOKIE = "la_session";

export function presentedCredentials(req: IncomingMessage, trust: ProxyTrust): PresentedCredentials {
  const apiKey = headerValue(req, "x-api-key");
  const auth = headerValue(req, "authorization");
  const bearer =
    auth && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, "").trim() || undefined : undefined;
  const cookie = readCookie(headerValue(req, "cookie"), SESSION_COOKIE);
  const presented: PresentedCredentials = { clientIp: clientAddress(req, trust) };
  if (apiKey) presented.apiKey = apiKey;
  if (bearer) presented.bearer = bearer;
  if (cookie) presented.cookie = cookie;
  return presented;
}

/**
 * Who a request is counted against: a verified API key (by its id), else a verified session token or
 * cookie (by its session), else the client IP. A credential that is absent, unchecked or invalid counts
 * against the IP, so random values buy no budget of their own. The kind prefix keeps the kinds apart.
 */
export function rateLimitIdentity(
  verified:
    | { kind: "api_key"; apiKeyId: string }
    | { kind: "session"; sessionId: string }
    | { kind: "anonymous" }
    | undefined,
  c: PresentedCredentials,
): string {
  if (verified?.kind === "api_key") return `key:${verified.apiKeyId}`;
  if (verified?.kind === "session") return `token:${verified.sessionId}`;
  return `ip:${c.clientIp}`;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const first = Array.isArray(v) ? v[0] : v;
  return first?.trim() || undefined;
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(value) || undefined;
      } catch {
        return value || undefined;
      }
    }
  }
  return undefined;
}
