import { TokensService } from "@avatar/contracts/tokens";
import { type ServiceApp, type ServiceDeps, type ServiceModule, sealerFromEnv } from "@avatar/runtime";
import { migrations } from "./migrations/index.js";
import type { TokensDatabase } from "./schema.js";
import { tokensAdminService } from "./service.js";
import { SessionTokenSigner } from "./signing-keys.js";

export type { TokensDatabase } from "./schema.js";
export { tierLimits } from "./tiers.js";

export async function build(deps: ServiceDeps<TokensDatabase>): Promise<ServiceApp> {
  const signer = new SessionTokenSigner(deps.db, sealerFromEnv("tokens", deps.env, deps.log));
  await signer.ensureKey();
  return {
    name: "tokens",
    routes: (router) => router.service(TokensService, tokensAdminService(deps.db, signer)),
  };
}

export const tokensModule: ServiceModule<TokensDatabase> = { name: "tokens", migrations, build };
