import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { natsServerAvailable, natsServerGoEnv, startNatsServer } from "../src/nats-server.js";

const available = natsServerAvailable("the nats-server harness test");

describe.skipIf(!available)("startNatsServer", () => {
  it("runs nats-server with the Go settings of production (GOGC, GODEBUG) unless the environment names them", async () => {
    const server = await startNatsServer();
    try {
      const environ = readFileSync(`/proc/${server.pid()}/environ`, "utf8").split("\0");
      const { GOGC, GODEBUG } = natsServerGoEnv();
      expect(environ).toContain(`GOGC=${GOGC}`);
      expect(environ).toContain(`GODEBUG=${GODEBUG}`);
    } finally {
      await server.stop();
    }
  });
});
