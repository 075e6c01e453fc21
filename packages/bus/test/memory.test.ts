import { describe, expect, it } from "vitest";
import { createBusFromEnv } from "../src/index.js";
import { createMemoryBus } from "../src/memory.js";
import { busContract, busLoggingContract } from "./contract.js";
import { recordingLogger } from "./support.js";

busContract("memory", async () => {
  const bus = createMemoryBus({ logger: recordingLogger().logger });
  return { bus, cleanup: () => bus.close() };
});

busLoggingContract("memory", async (logger) => createMemoryBus({ logger }));

describe("createBusFromEnv without a NATS URL", () => {
  it.each([undefined, "", "  "])("gives the in-process bus for %j", async (url) => {
    const bus = await createBusFromEnv(url);
    expect(bus.kind).toBe("memory");
    await bus.close();
  });
});
