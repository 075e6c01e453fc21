import type { SessionConfig } from "@avatar/contracts/common";
import type { LocalEspeakSynthesizer } from "@avatar/providers";
import type { Clients, EgressFetch, Logger } from "@avatar/runtime";
import type { Endpoint, ProviderName, ProviderSettings } from "./settings.js";
import { type Key, SECRET_TYPES, type SpaceKeys } from "./space-keys.js";

/** What choosing one session's providers needs. */
export interface Choice {
  readonly config: SessionConfig;
  readonly spaceId: string;
  readonly settings: ProviderSettings;
  readonly clients: Clients;
  readonly keys: SpaceKeys;
  readonly log: Logger;
  /** Key values known to this session (managed and revealed): scrubbed from every provider error. */
  readonly secrets: Set<string>;
  /** The checked fetch for customer-supplied URLs (an LLM configuration's base_url). */
  readonly egress: EgressFetch;
  /** The process's local synthesizer (created on first use). */
  readonly local: () => LocalEspeakSynthesizer;
  /** Tells the client the session runs degraded (a `warning` event) and logs it. */
  warn(type: string, message: string): void;
}

/** An endpoint with the key to use on it: the space's own secret of the provider's type, else the managed key. */
export interface Access {
  endpoint: Endpoint;
  key: Key;
}

export async function accessTo(choice: Choice, name: ProviderName): Promise<Access | undefined> {
  const endpoint = choice.settings.endpoints[name];
  if (!endpoint) return undefined;
  const type = (
    SECRET_TYPES as Partial<Record<ProviderName, (typeof SECRET_TYPES)[keyof typeof SECRET_TYPES]>>
  )[name];
  const own = type === undefined ? undefined : await choice.keys.ofType(type, endpoint.url);
  if (own) return { endpoint, key: own };
  if (endpoint.managedKey) return { endpoint, key: { value: endpoint.managedKey, source: "managed" } };
  return undefined;
}

/** The endpoint with the secret a LITE configuration names. */
export async function accessWithSecret(
  choice: Choice,
  name: ProviderName,
  secretId: string,
  provider: string,
): Promise<Access | undefined> {
  const endpoint = choice.settings.endpoints[name];
  if (!endpoint) return undefined;
  return { endpoint, key: await choice.keys.named(secretId, provider, endpoint.url) };
}
