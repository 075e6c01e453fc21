import { ConfigError, type Env, env, readConfig } from "@avatar/runtime";

/**
 * The deployment's transportA server (contract section 7). All three of URL, key and secret, or none:
 * without them no session gets a room and the media goes out over WHEP only.
 */
export const transportASettings = {
  /** The server as the services reach it (ws, wss, http or https). */
  TRANSPORT_A_URL: env.optionalUrl({ protocols: ["ws:", "wss:", "http:", "https:"] }),
  TRANSPORT_A_API_KEY: env.optionalString(),
  /** Signs the room tokens and the server API calls; never logged, never part of a token. */
  TRANSPORT_A_API_SECRET: env.optionalString(),
  /** The server as clients reach it, answered by start as transportA_url (default: TRANSPORT_A_URL). */
  TRANSPORT_A_PUBLIC_URL: env.optionalUrl({ protocols: ["ws:", "wss:", "http:", "https:"] }),
};

export interface TransportAConfig {
  /** The URL the services use (server API and joining rooms). */
  readonly url: string;
  /** The URL clients are given, in its WebSocket form. */
  readonly publicUrl: string;
  readonly apiKey: string;
  /** Not enumerable: a config object that ends up in a log line or JSON does not carry it. */
  readonly apiSecret: string;
}

const REQUIRED = ["TRANSPORT_A_URL", "TRANSPORT_A_API_KEY", "TRANSPORT_A_API_SECRET"] as const;

/** The configured server, or undefined when none is; a partial configuration is refused at start. */
export function readTransportAConfig(source: Env): TransportAConfig | undefined {
  const s = readConfig(transportASettings, source);
  const missing = REQUIRED.filter((name) => !s[name]);
  if (missing.length === REQUIRED.length) {
    if (s.TRANSPORT_A_PUBLIC_URL) {
      throw new ConfigError(["TRANSPORT_A_PUBLIC_URL is set without TRANSPORT_A_URL"]);
    }
    return undefined;
  }
  if (missing.length > 0) {
    throw new ConfigError([
      `${REQUIRED.join(", ")} go together; ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} missing`,
    ]);
  }
  return transportAConfig({
    url: s.TRANSPORT_A_URL ?? "",
    publicUrl: s.TRANSPORT_A_PUBLIC_URL ?? s.TRANSPORT_A_URL ?? "",
    apiKey: s.TRANSPORT_A_API_KEY ?? "",
    apiSecret: s.TRANSPORT_A_API_SECRET ?? "",
  });
}

/** A config object whose secret stays out of JSON, logs and inspection. */
export function transportAConfig(values: {
  url: string;
  publicUrl?: string;
  apiKey: string;
  apiSecret: string;
}): TransportAConfig {
  const config = {
    url: values.url,
    publicUrl: webSocketUrl(values.publicUrl ?? values.url),
    apiKey: values.apiKey,
  };
  Object.defineProperty(config, "apiSecret", { value: values.apiSecret, enumerable: false });
  return config as TransportAConfig;
}

/** ws(s) for clients: the transportA client SDKs open the signalling socket on it. */
export function webSocketUrl(url: string): string {
  return url.replace(/^http(s?):/i, "ws$1:");
}

/** http(s) for the server API (Twirp over HTTP). */
export function httpUrl(url: string): string {
  return url.replace(/^ws(s?):/i, "http$1:");
}
