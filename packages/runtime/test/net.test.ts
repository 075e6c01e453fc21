import { readFileSync } from "node:fs";
import net from "node:net";
import { describe, expect, it, vi } from "vitest";
import { freePort, freePortRange } from "../src/net.js";

function listenOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("freePort", () => {
  it("returns a port on loopback that can be listened on right away", async () => {
    const port = await freePort();
    expect(Number.isInteger(port)).toBe(true);
    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThanOrEqual(65535);
    const server = await listenOn(port);
    expect((server.address() as net.AddressInfo).port).toBe(port);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("does not return a port that is taken", async () => {
    const taken = await listenOn(0);
    const takenPort = (taken.address() as net.AddressInfo).port;
    try {
      for (let i = 0; i < 5; i++) expect(await freePort()).not.toBe(takenPort);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it("draws ports under the system's ephemeral range, so no outgoing connection takes one meanwhile", async () => {
    const range = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const lowest = Number(range[0]);
    for (let i = 0; i < 20; i++) expect(await freePort()).toBeLessThan(lowest);
  });

  it("keeps a reservation under a clock that is not the filesystem's (CI's clock-ahead group moves it)", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 400 * 86_400_000 });
    // The same draw for the first call and for the second call's first try.
    const draw = Math.random();
    const random = vi.spyOn(Math, "random").mockReturnValueOnce(draw).mockReturnValueOnce(draw);
    try {
      const first = await freePort();
      expect(await freePort()).not.toBe(first);
    } finally {
      random.mockRestore();
      vi.useRealTimers();
    }
  });

  it("takes over a reservation dated in its clock's future (made under a moved clock), not one of now", async () => {
    const draw = Math.random();
    const random = vi.spyOn(Math, "random").mockReturnValueOnce(draw);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 400 * 86_400_000 });
    let ahead: number;
    try {
      ahead = await freePort();
    } finally {
      vi.useRealTimers();
    }
    try {
      // The draw of that port (the first draw may have met a live reservation and drawn again).
      const [low, high] = freePortRange();
      const drawOf = (port: number) => (port - low + 0.5) / (high - low);
      random.mockReturnValueOnce(drawOf(ahead));
      expect(await freePort()).toBe(ahead);
      // Now reserved by this clock: the same draw gets another port.
      random.mockReturnValueOnce(drawOf(ahead));
      expect(await freePort()).not.toBe(ahead);
    } finally {
      random.mockRestore();
    }
  });

  it("never hands the same port out twice while it is reserved, even to callers at the same time", async () => {
    // 300 random draws from ~22,000 ports: about two pairs alike per run without the reservations.
    const ports = await Promise.all(Array.from({ length: 300 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
  });
});
