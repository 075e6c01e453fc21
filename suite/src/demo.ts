import { readCatalogFile } from "@avatar/catalog";
import { AvatarStatus } from "@avatar/contracts/catalog";
import { Tier } from "@avatar/contracts/tokens";
import type { Clients } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";

/** The demo space every fresh `pnpm start` has, with a fixed id so later starts find it. */
export const DEMO_SPACE_ID = "00000000-0000-4000-8000-00000000de70";

export interface DemoSeed {
  spaceId: string;
  /** Set only when this call created a key: it is shown once. */
  newApiKey?: string;
}

/**
 * Creates the demo space on first start: its API key is `apiKey` when given, otherwise generated.
 * On later starts a configured key that the space does not know yet is added to it.
 */
export async function seedDemoSpace(clients: Clients, apiKey: string | undefined): Promise<DemoSeed> {
  const existing = await clients.tokens.getSpace({ spaceId: DEMO_SPACE_ID }).catch((err: unknown) => {
    if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
    throw err;
  });
  if (existing) {
    if (apiKey && !(await knownKey(clients, apiKey))) {
      await clients.tokens.createApiKey({ spaceId: DEMO_SPACE_ID, name: "AVATAR_DEMO_API_KEY", apiKey });
    }
    return { spaceId: DEMO_SPACE_ID };
  }
  const created = await clients.tokens.createSpace({
    id: DEMO_SPACE_ID,
    name: "Demo space",
    tier: Tier.PRO,
    apiKey: apiKey ?? "",
  });
  const demoAvatars = readCatalogFile().demo_space_avatars;
  await clients.catalog.importAvatars({
    avatars: demoAvatars.map((a) => ({
      id: a.id,
      spaceId: DEMO_SPACE_ID,
      name: a.name,
      type: a.type,
      status: AvatarStatus.ACTIVE,
      previewUrl: a.preview_url,
      defaultVoice: a.default_voice_id ? { id: a.default_voice_id } : undefined,
      is1080p: a.is_1080p,
      sandboxEnabled: a.sandbox_enabled,
      lookSource: a.look ? { source: { case: "seed" as const, value: lookSeedOf(a.look) } } : undefined,
    })),
  });
  return apiKey ? { spaceId: DEMO_SPACE_ID } : { spaceId: DEMO_SPACE_ID, newApiKey: created.apiKeySecret };
}

function lookSeedOf(fields: Record<string, string>) {
  return {
    seed: fields.seed ?? "",
    presentation: fields.presentation ?? "",
    skinTone: fields.skin_tone ?? "",
    hairStyle: fields.hair_style ?? "",
    hairColor: fields.hair_color ?? "",
    outfit: fields.outfit ?? "",
    background: fields.background ?? "",
  };
}

async function knownKey(clients: Clients, apiKey: string): Promise<boolean> {
  try {
    await clients.tokens.authenticateApiKey({ apiKey });
    return true;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.Unauthenticated) return false;
    throw err;
  }
}
