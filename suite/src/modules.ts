import { catalogModule } from "@avatar/catalog";
import type { AnyServiceModule } from "@avatar/runtime";
import { tokensModule } from "@avatar/tokens";

/** Every internal service, in the order they start. */
export const serviceModules: AnyServiceModule[] = [catalogModule, tokensModule];
