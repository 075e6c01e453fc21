import { type ConfigOf, type Env, env, readConfig } from "@avatar/runtime";

/**
 * Where the pipeline reaches each provider, and the service's own (managed) keys. Endpoints come only
 * from here, never from code: PROVIDER_<NAME>_URL and PROVIDER_<NAME>_API_KEY for every provider name.
 * A provider without a URL is not configured on this service.
 */
export const PROVIDER_NAMES = [
  "VENDORA",
  "VENDORB",
  "VENDORB_REALTIME",
  "VENDORC",
  "VENDORD",
  "VENDORE",
  "STTVENDOR1",
  "STTVENDOR2",
  "STTVENDOR3",
] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

const SOCKET_OR_HTTP = ["http:", "https:", "ws:", "wss:"];

const endpointSpec = Object.fromEntries(
  PROVIDER_NAMES.flatMap((name) => [
    [`PROVIDER_${name}_URL`, env.optionalUrl({ protocols: SOCKET_OR_HTTP })],
    [`PROVIDER_${name}_API_KEY`, env.optionalString()],
  ]),
) as Record<string, ReturnType<typeof env.optionalString>>;

export const providerSettingsSpec = {
  /** Any OpenAI-compatible chat-completions endpoint (its API root, e.g. http://127.0.0.1:8080/v1). */
  LOCAL_LLM_URL: env.optionalUrl(),
  /** The model name sent to LOCAL_LLM_URL. */
  LOCAL_LLM_MODEL: env.string({ default: "local" }),
  /** Worker threads of the local speech synthesizer (shared by all sessions of the process). */
  LOCAL_TTS_WORKERS: env.int({ default: 1, min: 1, max: 16 }),
  /** vendorA's realtime speech-recognition model id; vendorA recognition runs only when it is set. */
  PROVIDER_VENDORA_STT_MODEL: env.optionalString(),
  /** The API version vendorD's synthesis socket is opened with (the client's default when unset). */
  PROVIDER_VENDORD_API_VERSION: env.optionalString(),
  /** How long a provider may take to accept a connection. */
  PROVIDER_CONNECT_TIMEOUT_MS: env.int({ default: 10_000, min: 100, max: 120_000 }),
};

export interface Endpoint {
  url: string;
  /** The service's managed key, if it has one. */
  managedKey: string | undefined;
}

export interface ProviderSettings {
  endpoints: Partial<Record<ProviderName, Endpoint>>;
  localLlm: { url: string; model: string } | undefined;
  localTtsWorkers: number;
  vendorASttModel: string | undefined;
  vendorDApiVersion: string | undefined;
  connectTimeoutMs: number;
}

export function readProviderSettings(source: Env): ProviderSettings {
  const c = readConfig({ ...endpointSpec, ...providerSettingsSpec }, source) as ConfigOf<
    typeof providerSettingsSpec
  > &
    Record<string, string | undefined>;
  const endpoints: Partial<Record<ProviderName, Endpoint>> = {};
  for (const name of PROVIDER_NAMES) {
    const url = c[`PROVIDER_${name}_URL`];
    if (url) endpoints[name] = { url, managedKey: c[`PROVIDER_${name}_API_KEY`] };
  }
  return {
    endpoints,
    localLlm: c.LOCAL_LLM_URL ? { url: c.LOCAL_LLM_URL, model: c.LOCAL_LLM_MODEL } : undefined,
    localTtsWorkers: c.LOCAL_TTS_WORKERS,
    vendorASttModel: c.PROVIDER_VENDORA_STT_MODEL,
    vendorDApiVersion: c.PROVIDER_VENDORD_API_VERSION,
    connectTimeoutMs: c.PROVIDER_CONNECT_TIMEOUT_MS,
  };
}
