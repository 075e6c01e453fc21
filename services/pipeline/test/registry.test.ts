import { randomUUID } from "node:crypto";
import { createMemoryBus } from "@avatar/bus";
import { WorkerHeartbeatSchema, WorkerSchema } from "@avatar/contracts/pipeline";
import { realtimeSubjects } from "@avatar/runtime";
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerRegistry } from "../src/worker/registry.js";
import { ManualClock } from "./manual-clock.js";

const EXPIRE_MS = 15_000;
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function rig() {
  const bus = createMemoryBus();
  const clock = new ManualClock();
  const registry = new WorkerRegistry(bus, clock, EXPIRE_MS);
  registry.start();
  stops.push(() => registry.stop());
  const beat = (bytes: Uint8Array) => bus.publish(realtimeSubjects.heartbeat, bytes);
  return { registry, clock, beat };
}

const worker = (id: string, sessionIds: string[]) =>
  create(WorkerSchema, {
    id,
    sessionIds,
    capacity: 1000,
    lastHeartbeatAt: timestampFromMs(1_700_000_000_000),
  });

const heartbeat = (w: ReturnType<typeof worker>) =>
  toBinary(
    WorkerHeartbeatSchema,
    create(WorkerHeartbeatSchema, {
      worker: w,
      leases: w.sessionIds.map((sessionId) => ({ sessionId, epoch: 1 })),
    }),
  );

describe("worker registry", () => {
  it("lists each worker as its latest heartbeat gave it, until it has been silent too long", async () => {
    const { registry, clock, beat } = rig();
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    beat(heartbeat(worker("w2", ids.slice(0, 10))));
    beat(heartbeat(worker("w1", ids.slice(0, 1))));
    beat(heartbeat(worker("w2", ids)));
    await flush();
    expect(registry.list()).toEqual([worker("w1", ids.slice(0, 1)), worker("w2", ids)]);
    expect(registry.workerOf(ids[999] as string)?.id).toBe("w2");
    expect(registry.workerOf((ids[0] as string).toUpperCase())?.id).toBe("w1");
    clock.advance(EXPIRE_MS / 2);
    beat(heartbeat(worker("w1", [])));
    await flush();
    clock.advance(EXPIRE_MS / 2 + 1);
    expect(registry.list().map((w) => w.id)).toEqual(["w1"]);
  });

  it("keeps a heartbeat's worker without decoding its leases, and a copy, not the bus's buffer", async () => {
    const { registry, beat } = rig();
    const w = worker("w1", [randomUUID()]);
    // A lease that does not decode: a registry that decoded the whole heartbeat would throw on it.
    const bytes = new BinaryWriter()
      .tag(WorkerHeartbeatSchema.field.worker.number, WireType.LengthDelimited)
      .bytes(toBinary(WorkerSchema, w))
      .tag(WorkerHeartbeatSchema.field.leases.number, WireType.LengthDelimited)
      .bytes(new Uint8Array([0xff, 0xff, 0xff]))
      .finish();
    beat(bytes);
    bytes.fill(0);
    await flush();
    expect(registry.list()).toEqual([w]);
  });

  it("ignores what is not a heartbeat of a worker with an id", async () => {
    const { registry, beat } = rig();
    beat(new Uint8Array([0xff, 0xff, 0xff, 0xff]));
    beat(
      toBinary(
        WorkerHeartbeatSchema,
        create(WorkerHeartbeatSchema, { leases: [{ sessionId: "x", epoch: 1 }] }),
      ),
    );
    beat(heartbeat(worker("", [randomUUID()])));
    beat(new Uint8Array(0));
    // Its id readable, the rest of its worker not: heard, but not a worker to list.
    beat(
      new BinaryWriter()
        .tag(WorkerHeartbeatSchema.field.worker.number, WireType.LengthDelimited)
        .bytes(
          new BinaryWriter()
            .tag(WorkerSchema.field.id.number, WireType.LengthDelimited)
            .string("w5")
            .raw(new Uint8Array([0xff, 0xff]))
            .finish(),
        )
        .finish(),
    );
    const last = worker("w9", []);
    beat(heartbeat(last)); // delivered after those before it
    await flush();
    expect(registry.list()).toEqual([last]);
  });
});
