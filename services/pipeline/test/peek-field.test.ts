import { WorkerHeartbeatSchema, WorkerSchema } from "@avatar/contracts/pipeline";
import { SessionEndedSchema, SessionSchema } from "@avatar/contracts/sessions";
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { peekNestedString } from "../src/worker/peek-field.js";

const SESSION = SessionEndedSchema.field.session.number;
const ID = SessionSchema.field.id.number;

describe("peekNestedString", () => {
  it("reads the nested id past fields before it, and gives the nested message's bytes", () => {
    const heartbeat = create(WorkerHeartbeatSchema, {
      leases: [{ sessionId: "s1", epoch: 3 }],
      worker: { id: "w-7", capacity: 5 },
    });
    const found = peekNestedString(
      toBinary(WorkerHeartbeatSchema, heartbeat),
      WorkerHeartbeatSchema.field.worker.number,
      WorkerSchema.field.id.number,
    );
    expect(found?.value).toBe("w-7");
    expect(found?.bytes).toEqual(toBinary(WorkerSchema, create(WorkerSchema, { id: "w-7", capacity: 5 })));
  });

  it("finds the id after other fields of the nested message, and reads it as UTF-8", () => {
    const utf8 = (text: string) => [...new TextEncoder().encode(text)];
    const field = (tag: number, bytes: number[]) => [tag, bytes.length, ...bytes];
    // space_id (2), then api_key_id (3), then id (1): a writer may put them in any order.
    const session = [...field(0x12, utf8("sp")), ...field(0x1a, utf8("k")), ...field(0x0a, utf8("é-1"))];
    const event = new Uint8Array(field(0x0a, session));
    expect(peekNestedString(event, SESSION, ID)?.value).toBe("é-1");
  });

  it("answers undefined for no such field, a nested message without the id, and bytes that are not a message", () => {
    expect(
      peekNestedString(toBinary(SessionEndedSchema, create(SessionEndedSchema)), SESSION, ID),
    ).toBeUndefined();
    const noId = toBinary(SessionEndedSchema, create(SessionEndedSchema, { session: { spaceId: "sp" } }));
    expect(peekNestedString(noId, SESSION, ID)).toBeUndefined();
    expect(peekNestedString(new Uint8Array([0x0a, 0x20, 0x0a]), SESSION, ID)).toBeUndefined(); // cut short
    expect(peekNestedString(new Uint8Array([0x0f, 0x01]), SESSION, ID)).toBeUndefined(); // wire type 7
    expect(peekNestedString(new Uint8Array(), SESSION, ID)).toBeUndefined();
  });
});
