import { randomBytes } from "node:crypto";
import { AgentsService, SecretSchema, SecretType } from "@avatar/contracts/agents";
import { createSealer } from "@avatar/runtime";
import { toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { agentsService } from "../src/service.js";
import {
  agentsUnderTest,
  callDirectly,
  collectingLogger,
  expectFailure,
  FakeCatalog,
  MISSING,
  SPACE_A,
  SPACE_B,
} from "./support.js";

const { t, s } = agentsUnderTest();

const VALUE = "sk-proj-eu-3f9c2a7be41d40c8a1f7d2e96b0c5a13";

const store = (spaceId = SPACE_A, secretValue = VALUE, secretType = SecretType.VENDORB_API_KEY) =>
  s.agents
    .createSecret({ spaceId, secretName: "Production key", secretValue, secretType })
    .then((r) => r.secret ?? expect.fail("no secret"));

describe("hosts bound to a secret (allowed_hosts)", () => {
  it("are kept in lower case without duplicates and come back with the record and its reveal", async () => {
    const { secret } = await s.agents.createSecret({
      spaceId: SPACE_A,
      secretName: "k",
      secretValue: VALUE,
      secretType: SecretType.VENDORB_API_KEY,
      allowedHosts: ["LLM.example.com", "llm.example.com", "*.models.example"],
    });
    expect(secret?.allowedHosts).toEqual(["llm.example.com", "*.models.example"]);
    const revealed = await s.agents.revealSecret({ spaceId: SPACE_A, secretId: secret?.id ?? "" });
    expect(revealed.secret?.allowedHosts).toEqual(["llm.example.com", "*.models.example"]);
    expect((await s.agents.listSecrets({ spaceId: SPACE_A })).secrets[0]?.allowedHosts).toEqual([
      "llm.example.com",
      "*.models.example",
    ]);
  });

  it("refuse anything but host names: 400 naming allowed_hosts", async () => {
    for (const allowedHosts of [
      ["https://llm.example.com"],
      ["llm.example.com:8000"],
      ["llm.example.com/v1"],
      ["user@llm.example.com"],
      [""],
      ["*."],
      Array.from({ length: 21 }, (_, i) => `h${i}.example`),
    ]) {
      await expectFailure(
        s.agents.createSecret({
          spaceId: SPACE_A,
          secretName: "k",
          secretValue: VALUE,
          secretType: SecretType.VENDORB_API_KEY,
          allowedHosts,
        }),
        Code.InvalidArgument,
        "allowed_hosts",
      );
    }
  });
});

describe("storing", () => {
  it("answers the record without the value, and seals the value at rest under the secret's id", async () => {
    const secret = await store();
    expect(secret).toMatchObject({
      spaceId: SPACE_A,
      secretName: "Production key",
      secretType: SecretType.VENDORB_API_KEY,
    });
    expect(JSON.stringify(toJson(SecretSchema, secret))).not.toContain(VALUE);
    const row = await t.db
      .selectFrom("secrets")
      .selectAll()
      .where("id", "=", secret.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(VALUE);
    expect(row.key_id).toBe(s.sealer.currentKeyId);
    expect(s.sealer.open(row.sealed_value, secret.id)).toBe(VALUE);
    // Bound to its row: the sealed value does not open as another secret's.
    expect(() => s.sealer.open(row.sealed_value, MISSING)).toThrow();
  });

  it("accepts keys of every provider and region, of any format", async () => {
    const keys: [SecretType, string][] = [
      [SecretType.VENDORA_API_KEY, "sk_eu_residency_0123456789abcdef"],
      [SecretType.VENDORB_API_KEY, "sk-proj-us-abc"],
      [SecretType.VENDORC_API_KEY, '{"type":"service_account","region":"asia-northeast1"}'],
      [SecretType.VENDORD_API_KEY, "x"],
      [SecretType.VENDORE_API_KEY, "ünïcødé-key ✓"],
    ];
    for (const [type, value] of keys) {
      const secret = await store(SPACE_A, value, type);
      expect((await s.agents.revealSecret({ spaceId: SPACE_A, secretId: secret.id })).secretValue).toBe(
        value,
      );
    }
    expect((await s.agents.listSecrets({ spaceId: SPACE_A })).secrets).toHaveLength(keys.length);
  });

  it("refuses an unknown type, an empty value, a huge value and a long name, never quoting the value", async () => {
    await expectFailure(store(SPACE_A, VALUE, SecretType.UNSPECIFIED), Code.InvalidArgument, "secret_type");
    await expectFailure(store(SPACE_A, "   "), Code.InvalidArgument, "secret_value");
    const huge = `${VALUE}${"x".repeat(20_000)}`;
    const err = await expectFailure(store(SPACE_A, huge), Code.InvalidArgument, "secret_value");
    expect(err.message).not.toContain(VALUE);
    await expectFailure(
      s.agents.createSecret({
        spaceId: SPACE_A,
        secretName: "n".repeat(256),
        secretValue: VALUE,
        secretType: SecretType.VENDORB_API_KEY,
      }),
      Code.InvalidArgument,
      "secret_name",
    );
    expect(await t.db.selectFrom("secrets").selectAll().execute()).toEqual([]);
  });
});

describe("reading and deleting", () => {
  it("lists the space's secrets only, newest first", async () => {
    const first = await store();
    const second = await store();
    await store(SPACE_B);
    const { secrets } = await s.agents.listSecrets({ spaceId: SPACE_A });
    expect(secrets.map((x) => x.id)).toEqual([second.id, first.id]);
  });

  it("answers another space's secret like a missing one, in every operation", async () => {
    const theirs = await store(SPACE_B);
    for (const secretId of [theirs.id, MISSING, "nope"]) {
      await expectFailure(s.agents.getSecret({ spaceId: SPACE_A, secretId }), Code.NotFound, "secret_id");
      await expectFailure(s.agents.revealSecret({ spaceId: SPACE_A, secretId }), Code.NotFound, "secret_id");
      await expectFailure(s.agents.deleteSecret({ spaceId: SPACE_A, secretId }), Code.NotFound, "secret_id");
    }
    expect((await s.agents.revealSecret({ spaceId: SPACE_B, secretId: theirs.id })).secretValue).toBe(VALUE);
  });

  it("deletes once; the second delete is a 404", async () => {
    const secret = await store();
    await s.agents.deleteSecret({ spaceId: SPACE_A, secretId: secret.id });
    await expectFailure(
      s.agents.deleteSecret({ spaceId: SPACE_A, secretId: secret.id }),
      Code.NotFound,
      "secret_id",
    );
  });
});

describe("keys", () => {
  it("opens values sealed under a previous key after rotation, and seals new ones under the new key", async () => {
    const k1 = { id: "k1", key: randomBytes(32) };
    const k2 = { id: "k2", key: randomBytes(32) };
    const catalog = new FakeCatalog().client();
    const before = callDirectly(
      AgentsService,
      agentsService({ db: t.db, catalog, sealer: createSealer([k1], "k1"), log: collectingLogger().log }),
    );
    const old = (
      await before.createSecret({
        spaceId: SPACE_A,
        secretName: "old",
        secretValue: "v-old",
        secretType: SecretType.VENDORA_API_KEY,
      })
    ).secret;
    const after = callDirectly(
      AgentsService,
      agentsService({ db: t.db, catalog, sealer: createSealer([k1, k2], "k2"), log: collectingLogger().log }),
    );
    const fresh = (
      await after.createSecret({
        spaceId: SPACE_A,
        secretName: "new",
        secretValue: "v-new",
        secretType: SecretType.VENDORA_API_KEY,
      })
    ).secret;
    expect((await after.revealSecret({ spaceId: SPACE_A, secretId: old?.id ?? "" })).secretValue).toBe(
      "v-old",
    );
    expect((await after.revealSecret({ spaceId: SPACE_A, secretId: fresh?.id ?? "" })).secretValue).toBe(
      "v-new",
    );
    const keyIds = await t.db
      .selectFrom("secrets")
      .select(["secret_name", "key_id"])
      .orderBy("secret_name")
      .execute();
    expect(keyIds).toEqual([
      { secret_name: "new", key_id: "k2" },
      { secret_name: "old", key_id: "k1" },
    ]);
  });

  it("reports a value that does not open as an internal error that names the secret, not the value", async () => {
    const secret = await store();
    const { log, lines } = collectingLogger();
    const other = callDirectly(
      AgentsService,
      agentsService({
        db: t.db,
        catalog: new FakeCatalog().client(),
        sealer: createSealer([{ id: "k1", key: randomBytes(32) }], "k1"),
        log,
      }),
    );
    const err = await expectFailure(
      other.revealSecret({ spaceId: SPACE_A, secretId: secret.id }),
      Code.Internal,
    );
    expect(err.message).not.toContain(VALUE);
    expect(lines.join("\n")).toContain(secret.id);
    expect(lines.join("\n")).not.toContain(VALUE);
  });
});
