import { type Secret, SecretType } from "@avatar/contracts/agents";
import { ProviderError } from "@avatar/providers";
import type { Clients, Logger } from "@avatar/runtime";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ProviderName } from "./settings.js";

/** A provider key and where it came from (for logs: never the value). */
export interface Key {
  value: string;
  /** "space secret <id>" or "managed". */
  source: string;
}

/**
 * The keys of one session's space, revealed through the agents service once per secret and kept in
 * memory for the session only.
 */
export class SpaceKeys {
  private readonly revealed = new Map<string, Promise<string>>();
  private listing: Promise<Secret[]> | undefined;

  constructor(
    private readonly agents: Clients["agents"],
    private readonly spaceId: string,
    private readonly log: Logger,
    /** Every value revealed is added here, so errors can be scrubbed of it. */
    private readonly secrets: Set<string>,
  ) {}

  /** The space's newest secret of this type, or undefined when it has none. */
  async ofType(type: SecretType): Promise<Key | undefined> {
    const secrets = await this.list();
    const newest = secrets
      .filter((s) => s.secretType === type)
      .sort((a, b) => createdMs(b) - createdMs(a) || b.id.localeCompare(a.id))[0];
    if (!newest) return undefined;
    return { value: await this.reveal(newest.id), source: `space secret ${newest.id}` };
  }

  /** The secret a configuration names (LITE configs): an unknown or deleted one is an unauthorized provider. */
  async named(secretId: string, provider: string): Promise<Key> {
    return { value: await this.reveal(secretId, provider), source: `space secret ${secretId}` };
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

  private reveal(secretId: string, provider = "agents"): Promise<string> {
    let value = this.revealed.get(secretId);
    if (!value) {
      value = this.agents.revealSecret({ spaceId: this.spaceId, secretId }).then(
        (r) => {
          this.secrets.add(r.secretValue);
          this.log.info("secret revealed for the session", { secret_id: secretId });
          return r.secretValue;
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
export const SECRET_TYPES: Partial<Record<ProviderName, SecretType>> = {
  VENDORA: SecretType.VENDORA_API_KEY,
  VENDORB: SecretType.VENDORB_API_KEY,
  VENDORB_REALTIME: SecretType.VENDORB_API_KEY,
  VENDORC: SecretType.VENDORC_API_KEY,
  VENDORD: SecretType.VENDORD_API_KEY,
  VENDORE: SecretType.VENDORE_API_KEY,
};

function createdMs(secret: Secret): number {
  return secret.createdAt ? timestampMs(secret.createdAt) : 0;
}

function describe(err: unknown): string {
  if (err instanceof ConnectError) return err.rawMessage;
  return err instanceof Error ? err.message : String(err);
}
