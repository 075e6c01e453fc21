import { agentsModule } from "@avatar/agents";
import { catalogModule } from "@avatar/catalog";
import { memoryModule } from "@avatar/memory";
import { pipelineModule } from "@avatar/pipeline";
import type { AnyServiceModule } from "@avatar/runtime";
import { sessionsModule } from "@avatar/sessions";
import { tokensModule } from "@avatar/tokens";
import { webhooksModule } from "@avatar/webhooks";

/** Every internal service, in the order they start. */
export const serviceModules: AnyServiceModule[] = [
  catalogModule,
  tokensModule,
  agentsModule,
  memoryModule,
  sessionsModule,
  pipelineModule,
  webhooksModule,
];
