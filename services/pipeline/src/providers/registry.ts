import { LocalEspeakSynthesizer } from "@avatar/providers";
import {
  type Clients,
  createEgressFetch,
  type Env,
  type Logger,
  readEgressPolicy,
  readSecretDestinations,
} from "@avatar/runtime";
import type { SessionContext } from "../realtime/mode.js";
import type { Choice } from "./choice.js";
import { chooseConversation } from "./conversation.js";
import { chooseLanguageModel } from "./language-model.js";
import { chooseRecognizer } from "./recognition.js";
import type { SessionProviders, SessionProvidersFactory } from "./session-providers.js";
import { readProviderSettings } from "./settings.js";
import { SpaceKeys } from "./space-keys.js";
import { chooseSynthesizer } from "./synthesis.js";

export interface RegistryDeps {
  clients: Clients;
  env: Env;
  log: Logger;
}

/**
 * Chooses each session's providers from its SessionConfig (see providers/*.ts for the rules), once per
 * session and kind: the first call decides, later calls get the same answer (a failed choice is tried
 * again on the next call). The local synthesizer is one per process, shared by all sessions.
 */
export function sessionProviders(deps: RegistryDeps): SessionProvidersFactory {
  const settings = readProviderSettings(deps.env);
  const managedKeys = Object.values(settings.endpoints).flatMap((e) => (e?.managedKey ? [e.managedKey] : []));
  const egress = createEgressFetch(readEgressPolicy(deps.env));
  const destinations = readSecretDestinations(deps.env);
  let local: LocalEspeakSynthesizer | undefined;
  // One for the process; each session that speaks with it has its language's voice prepared.
  const localSynthesizer = (language: string) => {
    local ??= new LocalEspeakSynthesizer({ workers: settings.localTtsWorkers });
    local.prepare(language || undefined);
    return local;
  };
  deps.log.info("providers configured", {
    endpoints: Object.keys(settings.endpoints),
    local_llm: settings.localLlm !== undefined,
  });

  return (ctx: SessionContext): SessionProviders => {
    const secrets = new Set(managedKeys);
    const warned = new Set<string>();
    const choice: Choice = {
      config: ctx.config,
      spaceId: ctx.spaceId,
      settings,
      clients: deps.clients,
      keys: new SpaceKeys(deps.clients.agents, ctx.spaceId, ctx.log, secrets, destinations),
      log: ctx.log,
      secrets,
      egress,
      local: () => localSynthesizer(ctx.config.language),
      warn(type, message) {
        if (warned.has(message)) return;
        warned.add(message);
        ctx.log.warn(message, { warning: type });
        ctx.sendWarning(type, message);
      },
    };
    return {
      synthesizer: once(() => chooseSynthesizer(choice)),
      recognizer: once(() => chooseRecognizer(choice)),
      languageModel: once(() => chooseLanguageModel(choice)),
      conversation: once(() => chooseConversation(choice)),
    };
  };
}

/** The first successful answer, kept; a failure is not kept, so the next call tries again. */
function once<T>(choose: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= choose().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
