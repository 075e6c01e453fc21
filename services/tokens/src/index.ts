import { TokensService } from "@avatar/contracts/tokens";
import { type ServiceApp, type ServiceDeps, type ServiceModule, sealerFromEnv } from "@avatar/runtime";
import { cachedAgents } from "./agents-cache.js";
import { cachedCatalog } from "./catalog-cache.js";
import { migrations } from "./migrations/index.js";
import { mintService } from "./mint.js";
import { readMintSettings } from "./mint-settings.js";
import type { TokensDatabase } from "./schema.js";
import { tokensAdminService } from "./service.js";
import { batchedSessionCreation } from "./session-creations.js";
import { SessionTokenSigner } from "./signing-keys.js";
import { cachedSpaces } from "./space-cache.js";

export { compactJws, jwsHeader } from "./jws.js";
export { type MintDeps, mintSessionToken } from "./mint.js";
export { defaultMintSettings, type MintSettings, mintSettingsSpec } from "./mint-settings.js";
export type { TokensDatabase } from "./schema.js";
export { signatureAlgorithm } from "./signature-algorithms.js";
export { tierLimits } from "./tiers.js";

export interface TokensOptions {
  /** The service's one clock, milliseconds since the epoch: minting, signing and verifying read it. */
  now?: () => number;
}

export async function build(
  deps: ServiceDeps<TokensDatabase>,
  options: TokensOptions = {},
): Promise<ServiceApp> {
  const settings = readMintSettings(deps.env);
  const signer = new SessionTokenSigner(deps.db, sealerFromEnv("tokens", deps.env, deps.log), {
    ...(options.now ? { now: options.now } : {}),
    presign: { poolSize: settings.presignatures, log: deps.log },
  });
  await signer.ensureKey();
  const spaces = cachedSpaces(deps.db, deps.bus);
  // The catalog and agents clients are taken at the first call, not while the service builds.
  const catalog = cachedCatalog(
    {
      getAvatar: (req) => deps.clients.catalog.getAvatar(req),
      getVoice: (req) => deps.clients.catalog.getVoice(req),
    },
    deps.bus,
  );
  const agents = cachedAgents(
    {
      getContext: (req) => deps.clients.agents.getContext(req),
      getVoiceAgent: (req) => deps.clients.agents.getVoiceAgent(req),
      getLlmConfiguration: (req) => deps.clients.agents.getLlmConfiguration(req),
      getSecret: (req) => deps.clients.agents.getSecret(req),
      getEmbed: (req) => deps.clients.agents.getEmbed(req),
    },
    deps.bus,
  );
  const mint = mintService({
    db: deps.db,
    spaces,
    catalog,
    agents,
    signer,
    clients: deps.clients,
    // The sessions client is taken at the first call, not while the service builds.
    createSession: batchedSessionCreation({
      createSession: (req) => deps.clients.sessions.createSession(req),
      createSessionsBatch: (req) => deps.clients.sessions.createSessionsBatch(req),
    }),
    log: deps.log,
    settings,
  });
  return {
    name: "tokens",
    stop: () => signer.close(),
    routes: (router) =>
      router.service(TokensService, { ...tokensAdminService(deps.db, signer, spaces, deps.bus), ...mint }),
  };
}

export const tokensModule: ServiceModule<TokensDatabase> = {
  name: "tokens",
  migrations,
  build: (deps) => build(deps),
};
