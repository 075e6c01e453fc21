import type { AvatarLook, CatalogService } from "@avatar/contracts/catalog";
import type { Client } from "@connectrpc/connect";

export interface LoadedLook {
  look: AvatarLook;
  lookKey: string;
}

/** How long a worker keeps an avatar's look before asking the catalog again (a changed look has a new key). */
const LOOK_TTL_MS = 5 * 60_000;
/** Looks kept at once (each a few MB of PNG). */
const MAX_LOOKS = 64;

/**
 * Avatars' looks as the catalog stores them, kept a few minutes by this worker: every session on an
 * avatar needs its look, and one request at a time asks for it.
 */
export class LookSource {
  private readonly looks = new Map<string, { at: number; loading: Promise<LoadedLook> }>();

  constructor(
    private readonly catalog: Pick<Client<typeof CatalogService>, "getAvatarLook">,
    private readonly now: () => number = Date.now,
  ) {}

  get(spaceId: string, avatarId: string): Promise<LoadedLook> {
    const cached = this.looks.get(avatarId);
    if (cached && this.now() - cached.at < LOOK_TTL_MS) return cached.loading;
    const loading = this.load(spaceId, avatarId);
    this.looks.delete(avatarId);
    this.looks.set(avatarId, { at: this.now(), loading });
    loading.catch(() => this.looks.delete(avatarId));
    while (this.looks.size > MAX_LOOKS) this.looks.delete(this.looks.keys().next().value as string);
    return loading;
  }

  private async load(spaceId: string, avatarId: string): Promise<LoadedLook> {
    const res = await this.catalog.getAvatarLook({ spaceId, avatarId });
    if (!res.look) throw new Error(`avatar ${avatarId} has no look`);
    return { look: res.look, lookKey: res.lookKey };
  }
}
