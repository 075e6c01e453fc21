import { createHmac } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./support.js";

/** `avatarctl webhook verify` on a webhook signed the way the specification says (computed here). */

const secret = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
const body =
  '{"type":"session.ended","timestamp":"2026-11-24T10:00:00.000Z","data":{"end_reason":"USER_CLOSED"}}';
let dir: string;
let bodyFile: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "avatarctl-webhook-"));
  bodyFile = path.join(dir, "body.json");
  await writeFile(bodyFile, body);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function signed(id: string, timestamp: number, content = body) {
  const key = Buffer.from(secret.slice(6), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${content}`).digest("base64")}`;
}

const args = (headers: { id: string; timestamp: number; signature: string }) => [
  "webhook",
  "verify",
  "--secret",
  secret,
  "--id",
  headers.id,
  "--timestamp",
  String(headers.timestamp),
  "--signature",
  headers.signature,
  "--body-file",
  bodyFile,
];

describe("avatarctl webhook verify", () => {
  it("accepts a webhook signed with the endpoint's secret (one of several signatures)", async () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = `v1,bm90IHRoaXMgb25l ${signed("msg_1", timestamp)}`;
    const result = await cli(args({ id: "msg_1", timestamp, signature }));
    expect(result).toMatchObject({ code: 0, stdout: "valid\n" });
  });

  it("refuses a changed body, another id, and an old timestamp", async () => {
    const now = Math.floor(Date.now() / 1000);
    const changed = await cli(
      args({ id: "msg_1", timestamp: now, signature: signed("msg_1", now, `${body} `) }),
    );
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain("no signature matches");
    const otherId = await cli(args({ id: "msg_2", timestamp: now, signature: signed("msg_1", now) }));
    expect(otherId.code).toBe(1);
    const old = now - 3_600;
    const stale = await cli(args({ id: "msg_1", timestamp: old, signature: signed("msg_1", old) }));
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("more than 300 s away");
  });
});
