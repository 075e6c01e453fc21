import { createMemoryBus } from "@avatar/bus";
import { EmbedSchema } from "@avatar/contracts/agents";
import { type Clients, cacheInvalidations, notFound, publishInvalidation } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { withCachedEmbeds } from "../src/embed/embed-cache.js";

const EMBED = "0e0b0e0b-0000-4000-8000-000000000005";
const MISSING = "00000000-0000-4000-8000-000000000000";

/** Clients whose agents service counts its GetEmbed answers and lists its contexts. */
function countingClients() {
  let origins = ["https://shop.example"];
  const calls: string[] = [];
  const agents = {
    getEmbed: async (req: { embedId?: string }, options?: { headers?: Record<string, string> }) => {
      calls.push(`getEmbed ${options?.headers?.["x-request-id"] ?? "-"}`);
      if (req.embedId !== EMBED) throw notFound("Embed not found", { field: "embed_id" });
      return { embed: create(EmbedSchema, { id: EMBED, allowedOrigins: origins }) };
    },
    listContexts: async () => {
      calls.push("listContexts");
      return { contexts: [] };
    },
  };
  const clients = { agents, tokens: {} } as unknown as Clients;
  return { clients, calls, setOrigins: (o: string[]) => (origins = o) };
}

const originsOf = async (clients: Clients) =>
  (await clients.agents.getEmbed({ embedId: EMBED })).embed?.allowedOrigins;

describe("withCachedEmbeds", () => {
  it("asks the agents service once for an embed, passes every other call through, remembers no absence", async () => {
    const bus = createMemoryBus();
    const { clients, calls } = countingClients();
    const cached = withCachedEmbeds(clients, bus);
    for (let i = 0; i < 3; i++) expect(await originsOf(cached)).toEqual(["https://shop.example"]);
    await cached.agents.listContexts({});
    await cached.agents.listContexts({});
    for (let i = 0; i < 2; i++) {
      await expect(cached.agents.getEmbed({ embedId: MISSING })).rejects.toThrow(/Embed not found/);
    }
    expect(calls).toEqual(["getEmbed -", "listContexts", "listContexts", "getEmbed -", "getEmbed -"]);
    expect(cached.tokens).toBe(clients.tokens);
    await bus.close();
  });

  it("passes a call's options on to the load it starts (on whose behalf)", async () => {
    const bus = createMemoryBus();
    const { clients, calls } = countingClients();
    const cached = withCachedEmbeds(clients, bus);
    await cached.agents.getEmbed({ embedId: EMBED }, { headers: { "x-request-id": "req-1" } });
    expect(calls).toEqual(["getEmbed req-1"]);
    await bus.close();
  });

  it("drops the embed the moment the agents service's change is confirmed", async () => {
    const bus = createMemoryBus();
    const { clients, setOrigins } = countingClients();
    const cached = withCachedEmbeds(clients, bus);
    expect(await originsOf(cached)).toEqual(["https://shop.example"]);
    setOrigins(["https://other.example"]);
    expect(await originsOf(cached)).toEqual(["https://shop.example"]);
    await publishInvalidation(bus, cacheInvalidations.embeds, EMBED);
    expect(await originsOf(cached)).toEqual(["https://other.example"]);
    await bus.close();
  });
});
