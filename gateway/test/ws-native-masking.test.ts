import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every frame a browser sends is masked, and the event socket unmasks each one: ws does it in a
 * JavaScript loop (~95 µs for a 64 KiB LITE audio chunk on this machine) unless it finds the bufferutil
 * add-on (~1.2 µs) or Node's own. The gateway declares bufferutil so that the ws it runs finds it.
 */
describe("the event socket's unmasking", () => {
  const require = createRequire(import.meta.url);
  const wsDir = path.dirname(realpathSync(require.resolve("ws")));
  const bufferUtil = require(path.join(wsDir, "lib/buffer-util.js")) as { unmask: () => void };

  it("is native in the ws the gateway runs", () => {
    expect(createRequire(path.join(wsDir, "index.js")).resolve("bufferutil")).toContain("bufferutil");
    // With an add-on, ws's unmask hands frames of 32 bytes or more to it; without, it is the loop.
    expect(String(bufferUtil.unmask)).toMatch(/bufferUtil\.unmask|websocketUnmask/);
  });
});
