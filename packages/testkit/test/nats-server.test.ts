import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { natsServerAvailable, natsServerGogc, startNatsServer } from "../src/nats-server.js";

const available = natsServerAvailable("the nats-server harness test");

describe.skipIf(!available)("startNatsServer", () => {
  it("runs nats-server with the garbage collector setting of production (GOGC) unless the environment names one", async () => {
    const server = await startNatsServer();
    try {
      const environ = readFileSync(`/proc/${server.pid()}/environ`, "utf8").split("\0");
      expect(environ).toContain(`GOGC=${natsServerGogc()}`);
    } finally {
      await server.stop();
    }
  });
});
