import { ANY_ORIGIN } from "@avatar/runtime";

/**
 * The response headers of an embed's page. Its Content-Security-Policy allows its own inline code,
 * calls and sockets to this service only (the origin of the public base URL, http(s) and ws(s)),
 * images and media from this origin (a poster image; WebRTC media needs no directive), and framing only
 * by the origins the embed's owner allowed (`'self'` when none, any with "*").
 */
export function embedPageHeaders(options: {
  baseUrl: string;
  allowedOrigins: readonly string[];
}): Record<string, string> {
  const base = new URL(options.baseUrl);
  const socketOrigin = `${base.protocol === "https:" ? "wss:" : "ws:"}//${base.host}`;
  const csp = [
    "default-src 'none'",
    "script-src 'unsafe-inline'",
    "style-src 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob: mediastream:",
    `connect-src 'self' ${base.origin} ${socketOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors(options.allowedOrigins)}`,
  ].join("; ");
  return {
    "Content-Security-Policy": csp,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
  };
}

function frameAncestors(allowed: readonly string[]): string {
  if (allowed.includes(ANY_ORIGIN)) return "*";
  return ["'self'", ...allowed].join(" ");
}
