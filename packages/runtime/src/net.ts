import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** How long a port handed out stays reserved for its caller (across processes). */
const RESERVED_FOR_MS = 10 * 60_000;
const LOWEST_PICK = 10_000;

/**
 * A TCP port on the loopback interface that is free now and stays free for the server its caller
 * starts, often another process seconds later. A port the system picks (`listen(0)`) comes from its
 * ephemeral range, where an outgoing connection or another `listen(0)` can take it in the meantime (a
 * busy test run saw a service's port taken both ways). So the port is drawn from below that range, which
 * the system never hands out by itself, and reserved for a while by a file in the temporary directory,
 * so that no two callers, in any process, get the same one.
 */
export async function freePort(): Promise<number> {
  const [low, high] = freePortRange();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (reserve(port) && (await canListen(port))) return port;
  }
  return systemPort();
}

/** Where freePort draws from: ports under the system's ephemeral range (Linux's ip_local_port_range; 32768 elsewhere). */
export function freePortRange(): [number, number] {
  try {
    const lowest = Number(
      readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0],
    );
    if (Number.isInteger(lowest) && lowest > LOWEST_PICK + 1_000) return [LOWEST_PICK, lowest];
  } catch {
    // Not Linux.
  }
  return [LOWEST_PICK, 32_768];
}

/** Whether `port` was not handed out (in any process) within RESERVED_FOR_MS; if so, it is now. */
function reserve(port: number): boolean {
  const dir = path.join(os.tmpdir(), "avatar-free-ports");
  const file = path.join(dir, String(port));
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, String(process.pid), { flag: "wx" });
    // Its time from this process's clock, as the check below reads it, not the filesystem's: under a
    // moved clock (faketime in CI's clock-ahead group) a fresh reservation read as 400 days old.
    const now = new Date();
    utimesSync(file, now, now);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") return true; // No place to reserve: listening decides.
  }
  try {
    // A reservation dated in this clock's future was made under another clock: not a live one.
    const age = Date.now() - statSync(file).mtimeMs;
    if (age >= 0 && age < RESERVED_FOR_MS) return false;
    const now = new Date();
    utimesSync(file, now, now);
    return true;
  } catch {
    return false;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** The system's choice, when no port under its ephemeral range could be had. */
function systemPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("no port"));
      });
    });
  });
}
