import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { GatewayConfig } from "../config.js";
import { forwardedProto, type ProxyTrust } from "./trusted-proxies.js";

/**
 * The public address absolute URLs are built from (ws_url, next/previous, an embed's url), and whether
 * the caller reached us over HTTPS. Never from an untrusted Host header:
 * - PUBLIC_BASE_URL, when set, is the address, whatever the request says;
 * - otherwise the request's Host is used only when PUBLIC_HOSTS allows it (host or host:port entries;
 *   unset, only loopback names: localhost, 127.0.0.1, [::1], on any port, for local use);
 * - any other Host gets the first PUBLIC_HOSTS entry instead (unset: localhost), on the port the request
 *   arrived at when the entry names none. Such links are wrong for a remote client but lead nowhere
 *   an attacker chose; a deployment sets PUBLIC_BASE_URL (the gateway warns at start when it has neither).
 */

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];

interface HostEntry {
  hostname: string;
  port: string | undefined;
}

function parseHost(text: string): HostEntry | undefined {
  const trimmed = text.trim();
  if (trimmed === "" || /[/?#@\s\\]/.test(trimmed) || !URL.canParse(`http://${trimmed}/`)) return undefined;
  const url = new URL(`http://${trimmed}/`);
  return { hostname: url.hostname, port: /:(\d+)$/.test(trimmed) ? url.port || "80" : undefined };
}

export function parsePublicHosts(text: string | undefined): HostEntry[] {
  const entries = (text ?? "").split(/[\s,]+/).filter((e) => e !== "");
  return entries.map((entry) => {
    const parsed = parseHost(entry);
    if (!parsed) throw new Error(`PUBLIC_HOSTS: "${entry}" is not a host or host:port`);
    return parsed;
  });
}

/** True when the request came over HTTPS: its own TLS, or a trusted proxy saying so. */
export function requestIsHttps(req: IncomingMessage, trust: ProxyTrust): boolean {
  if ((req.socket as TLSSocket).encrypted) return true;
  return forwardedProto(req, trust) === "https";
}

export function publicBaseUrl(
  req: IncomingMessage,
  config: GatewayConfig,
  allowed: HostEntry[],
  trust: ProxyTrust,
): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, "");
  const scheme = requestIsHttps(req, trust) ? "https" : "http";
  const presented = req.headers.host ? parseHost(req.headers.host) : undefined;
  const accepts = (h: HostEntry) =>
    allowed.length > 0
      ? allowed.some((a) => a.hostname === h.hostname && (a.port === undefined || a.port === h.port))
      : LOOPBACK.includes(h.hostname);
  if (presented && accepts(presented)) return `${scheme}://${req.headers.host?.trim()}`;
  const fallback = allowed[0] ?? { hostname: "localhost", port: undefined };
  const port = fallback.port ?? String(req.socket.localPort ?? "");
  return `${scheme}://${fallback.hostname}${port ? `:${port}` : ""}`;
}
