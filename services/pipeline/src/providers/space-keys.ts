import { type Secret, SecretType } from "@avatar/contracts/agents";
import { ProviderError } from "@avatar/providers";
import {
  type Clients,
  type Logger,
  SECRET_TYPE_PROVIDERS,
  type SecretBinding,
  type SecretDestinations,
} from "@avatar/runtime";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ProviderName } from "./settings.js";

/** A provider key and where it came from (for logs: never the value). */
export interface Key {
  value: string;
  /** "space secret <id>" or "managed". */
  source: string;
}

interface Revealed {
  value: string;
  binding: SecretBinding;
}

/**
 * The keys of one session's space, revealed through the agents service once per secret and kept in
 * memory for the session only. Each use names where the key is going: a key is handed out only for a
 * destination its secret may be sent to (its provider type's hosts or the hosts bound to it).
 */
export class SpaceKeys {
  private readonly revealed = new Map<string, Promise<Revealed>>();
  private listing: Promise<Secret[]> | undefined;

  constructor(
    private readonly agents: Clients["agents"],
    private readonly spaceId: string,
    private readonly log: Logger,
    /** Every value revealed is added here, so errors can be scrubbed of it. */
    private readonly secrets: Set<string>,
    private readonly destinations: SecretDestinations,
  ) {}

  /** The space's newest secret of this type for `destination`, or undefined when it has none. */
  async ofType(type: SecretType, destination: string, provider = "agents"): Promise<Key | undefined> {
    const secrets = await this.list();
    const newest = secrets
      .filter((s) => s.secretType === type)
      .sort((a, b) => createdMs(b) - createdMs(a) || b.id.localeCompare(a.id))[0];
    if (!newest) return undefined;
    return {
      value: await this.revealFor(newest.id, provider, destination),
      source: `space secret ${newest.id}`,
    };
  }

  /**
   * The secret a configuration names (LITE configs, LLM configurations), for `destination`: an unknown or
   * deleted one, or one that may not go there, is an unauthorized provider.
   */
  async named(secretId: string, provider: string, destination: string): Promise<Key> {
    return {
      value: await this.revealFor(secretId, provider, destination),
      source: `space secret ${secretId}`,
    };
  }

  private async revealFor(secretId: string, provider: string, destination: string): Promise<string> {
    const { value, binding } = await this.reveal(secretId, provider);
    if (!this.destinations.allows(binding, destination)) {
      this.log.warn("secret refused for a destination it is not bound to", {
        secret_id: secretId,
        host: URL.canParse(destination) ? new URL(destination).hostname : "",
      });
      throw new ProviderError(
        provider,
        `the secret ${secretId} may not be sent to this host (not its provider's, not in its allowed_hosts)`,
        "unauthorized",
      );
    }
    return value;
  }

  private list(): Promise<Secret[]> {
    this.listing ??= this.agents.listSecrets({ spaceId: this.spaceId }).then(
      (r) => r.secrets,
      (err: unknown) => {
        this.listing = undefined;
        throw new ProviderError(
          "agents",
          `cannot list the space's secrets: ${describe(err)}`,
          "unavailable",
          {
            cause: err,
          },
        );
      },
    );
    return this.listing;
  }

  private reveal(secretId: string, provider: string): Promise<Revealed> {
    let value = this.revealed.get(secretId);
    if (!value) {
      value = this.agents.revealSecret({ spaceId: this.spaceId, secretId }).then(
        (r) => {
          this.secrets.add(r.secretValue);
          this.log.info("secret revealed for the session", { secret_id: secretId });
          return {
            value: r.secretValue,
            binding: {
              secretType: r.secret?.secretType ?? SecretType.UNSPECIFIED,
              allowedHosts: r.secret?.allowedHosts ?? [],
            },
          };
        },
        (err: unknown) => {
          this.revealed.delete(secretId);
          if (err instanceof ConnectError && err.code === Code.NotFound) {
            throw new ProviderError(provider, `the secret ${secretId} no longer exists`, "unauthorized");
          }
          throw new ProviderError(
            provider,
            `cannot read the secret ${secretId}: ${describe(err)}`,
            "unavailable",
            {
              cause: err,
            },
          );
        },
      );
      this.revealed.set(secretId, value);
    }
    return value;
  }
}

/** The secret type that holds a provider's keys (the recognition vendors have none: managed keys only). */
export const SECRET_TYPES: Partial<Record<ProviderName, SecretType>> = Object.fromEntries(
  Object.entries(SECRET_TYPE_PROVIDERS).flatMap(([type, names]) => names.map((name) => [name, Number(type)])),
);

function createdMs(secret: Secret): number {
  return secret.createdAt ? timestampMs(secret.createdAt) : 0;
}

function describe(err: unknown): string {
  if (err instanceof ConnectError) return err.rawMessage;
  return err instanceof Error ? err.message : String(err);
}
