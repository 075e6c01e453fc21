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
  return {
    ...(apiKey ? { apiKey } : {}),
    ...(bearer ? { bearer } : {}),
    ...(cookie ? { cookie } : {}),
    clientIp: clientAddress(req, trust),
  };
}

/**
 * Who a request is counted against: the API key for backend calls, else the bearer session token, else the
 * session cookie, else the client IP. The kind prefix keeps the kinds apart.
 */
export function rateLimitIdentity(c: PresentedCredentials): string {
  if (c.apiKey) return `key:${c.apiKey}`;
  if (c.bearer) return `token:${c.bearer}`;
  if (c.cookie) return `token:${c.cookie}`;
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
