import { dispose } from "@livekit/rtc-node";

/**
 * transportA's SDK runs a native runtime per process that keeps the process alive until it is disposed,
 * and a disposed runtime answers nothing more. Users hold it with `retainTransportA()` and let it go with
 * the function it returns; the last one to let go disposes it. The SDK keeps its client in a global that
 * survives `dispose()` (rtc-node 1.1.0): clearing it lets the next user start a fresh runtime in the same
 * process (a test file or a process that stops and starts its services again).
 */
let holders = 0;

export function retainTransportA(): () => Promise<void> {
  holders++;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    holders--;
    if (holders > 0) return;
    await dispose();
    (globalThis as { _ffiClientInstance?: unknown })._ffiClientInstance = undefined;
  };
}
