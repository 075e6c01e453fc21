import { describe, expect, it } from "vitest";
import { createLogger, silentLogger } from "../src/log.js";
import { collectingLogger } from "./support.js";

describe("createLogger", () => {
  it("writes one JSON object per line with time, level, message and fields", () => {
    const { log, lines } = collectingLogger();
    log.info("hello", { user: "u1", n: 3 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    const entry = JSON.parse(lines[0] ?? "");
    expect(entry).toMatchObject({ level: "info", msg: "hello", user: "u1", n: 3 });
    expect(new Date(entry.time).toISOString()).toBe(entry.time);
  });

  it("drops entries below its level and keeps the rest", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "warn", sink: (l) => lines.push(l) });
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(["warn", "error"]);
  });

  it("logs info and above by default", () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (l) => lines.push(l) });
    log.debug("d");
    log.info("i");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["i"]);
  });

  it("gives children their own fields on top of the parent's, without changing the parent", () => {
    const { log, records } = collectingLogger();
    const parent = log.child({ service: "catalog", shared: "parent" });
    const child = parent.child({ shared: "child", component: "seed" });
    child.info("from child");
    parent.info("from parent");
    const [fromChild, fromParent] = records();
    expect(fromChild).toMatchObject({ service: "catalog", shared: "child", component: "seed" });
    expect(fromParent).toMatchObject({ service: "catalog", shared: "parent" });
    expect(fromParent).not.toHaveProperty("component");
  });

  it("keeps the parent's level and sink in children", () => {
    const lines: string[] = [];
    const child = createLogger({ level: "error", sink: (l) => lines.push(l) }).child({ a: 1 });
    child.warn("dropped");
    child.error("kept");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["kept"]);
  });

  it("adds no request id of its own: a line names its call only when it is given one", async () => {
    const { log, records } = collectingLogger();
    log.info("plain");
    log.info("about a call", { request_id: "req-42" });
    const [plain, call] = records();
    expect(plain).not.toHaveProperty("request_id");
    expect(call).toMatchObject({ msg: "about a call", request_id: "req-42" });
  });

  it("serializes an error under `err` with its name, message and stack", () => {
    const { log, records } = collectingLogger();
    const err = new TypeError("boom");
    log.error("failed", { err });
    const [entry] = records();
    expect(entry?.err).toEqual({ name: "TypeError", message: "boom", stack: err.stack });
    expect(String((entry?.err as { stack?: string } | undefined)?.stack)).toContain("log.test.ts");
  });

  it("writes a non-Error `err` as it is", () => {
    const { log, records } = collectingLogger();
    log.warn("odd", { err: "just text" });
    expect(records()[0]?.err).toBe("just text");
  });

  it("silentLogger writes nothing and still makes children", () => {
    const writes: unknown[] = [];
    const original = process.stdout.write;
    process.stdout.write = ((chunk: unknown) => writes.push(chunk) > 0) as typeof process.stdout.write;
    try {
      silentLogger.error("nothing");
      silentLogger.child({ a: 1 }).error("nothing either");
    } finally {
      process.stdout.write = original;
    }
    expect(writes).toEqual([]);
  });
});
