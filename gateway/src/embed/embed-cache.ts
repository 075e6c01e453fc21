import type { Bus } from "@avatar/bus";
import { type Clients, cachedGet, cacheInvalidations } from "@avatar/runtime";

/**
 * The clients with the agents service's GetEmbed cached, as the tokens service caches it for a visitor's
 * mint: a visitor reads the embed for its page, its poster and, from another origin, the check of its
 * session's origin. The agents service answers an owner's change of an embed (disabled, limits, origins)
 * only once its invalidation went out, so the next visit meets the change. Everything else goes through.
 */
export function withCachedEmbeds(clients: Clients, bus: Bus): Clients {
  // The agents client is taken at the first call, not while the gateway builds.
  const getEmbed = cachedGet(
    bus,
    cacheInvalidations.embeds,
    (
      req: Parameters<Clients["agents"]["getEmbed"]>[0],
      options?: Parameters<Clients["agents"]["getEmbed"]>[1],
    ) => clients.agents.getEmbed(req, options),
    { id: "embedId", value: "embed" },
  );
  let agents: Clients["agents"] | undefined;
  return new Proxy(clients, {
    get(target, name, receiver) {
      if (name !== "agents") return Reflect.get(target, name, receiver);
      agents ??= new Proxy(target.agents, {
        get: (client, method, r) => (method === "getEmbed" ? getEmbed : Reflect.get(client, method, r)),
      });
      return agents;
    },
  });
}
