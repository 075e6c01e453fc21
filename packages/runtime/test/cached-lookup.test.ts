import { createMemoryBus } from "@avatar/bus";
import { describe, expect, it } from "vitest";
import { cachedGet, publishInvalidation } from "../src/index.js";

interface ThingRequest {
  spaceId?: string;
  thingId?: string;
}
interface ThingResponse {
  thing?: { name: string };
}

const SUBJECT = "cache.test.things";

/** A Get RPC that counts its loads and answers an empty response for the id "blank". */
function things() {
  const loads: string[] = [];
  const names = new Map([["t1", "first"]]);
  const get = async (req: ThingRequest, options?: { who: string }): Promise<ThingResponse> => {
    loads.push(`${req.spaceId ?? "-"} ${req.thingId} ${options?.who ?? "-"}`);
    const name = names.get(req.thingId ?? "");
    return name === undefined ? {} : { thing: { name } };
  };
  return { loads, names, get };
}

describe("cachedGet", () => {
  it("loads once per id and asking space, whatever the id's case", async () => {
    const { loads, get } = things();
    const cached = cachedGet(undefined, SUBJECT, get, { id: "thingId", value: "thing" });
    for (const thingId of ["t1", "T1", "t1"]) {
      expect((await cached({ spaceId: "s1", thingId })).thing?.name).toBe("first");
    }
    await cached({ spaceId: "s2", thingId: "t1" });
    await cached({ thingId: "t1" });
    expect(loads).toEqual(["s1 t1 -", "s2 t1 -", "- t1 -"]);
  });

  it("answers an empty response and keeps none of it", async () => {
    const { loads, get } = things();
    const cached = cachedGet(undefined, SUBJECT, get, { id: "thingId", value: "thing" });
    expect(await cached({ spaceId: "s1", thingId: "blank" })).toEqual({});
    expect(await cached({ spaceId: "s1", thingId: "blank" })).toEqual({});
    expect(loads).toEqual(["s1 blank -", "s1 blank -"]);
  });

  it("passes a call's options to the load it starts, and drops an id for every space on its subject", async () => {
    const bus = createMemoryBus();
    const { loads, names, get } = things();
    const cached = cachedGet(bus, SUBJECT, get, { id: "thingId", value: "thing" });
    await cached({ spaceId: "s1", thingId: "t1" }, { who: "owner" });
    await cached({ spaceId: "s2", thingId: "t1" });
    names.set("t1", "second");
    await publishInvalidation(bus, SUBJECT, "t1");
    expect((await cached({ spaceId: "s1", thingId: "t1" })).thing?.name).toBe("second");
    expect((await cached({ spaceId: "s2", thingId: "t1" })).thing?.name).toBe("second");
    expect(loads).toEqual(["s1 t1 owner", "s2 t1 -", "s1 t1 -", "s2 t1 -"]);
    await bus.close();
  });
});
