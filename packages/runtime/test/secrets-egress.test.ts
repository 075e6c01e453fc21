import { SecretType } from "@avatar/contracts/agents";
import { describe, expect, it } from "vitest";
import {
  partialSecretTail,
  readSecretDestinations,
  SCRUBBED,
  scrubSecrets,
  scrubStream,
  secretForms,
  secretHostProblem,
} from "../src/index.js";

describe("scrubSecrets", () => {
  const key = 'sk-"odd"/key\\with-ü';
  it("finds a value as it is, JSON-escaped (also with \\/ and \\u escapes) and URL-encoded", () => {
    const echoes = [
      key,
      JSON.stringify(key).slice(1, -1),
      JSON.stringify(key).slice(1, -1).replaceAll("/", "\\/"),
      JSON.stringify(key).slice(1, -1).replace("ü", "\\u00fc"),
      [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
      encodeURIComponent(key),
    ];
    for (const echo of echoes)
      expect(scrubSecrets(`before ${echo} after`, [key])).toBe(`before ${SCRUBBED} after`);
  });
  it("leaves short values alone (they would match ordinary words)", () => {
    expect(secretForms("abc")).toEqual([]);
    expect(scrubSecrets("abc abc", ["abc"])).toBe("abc abc");
  });
});

describe("scrubStream", () => {
  async function collect(pieces: string[], values: Set<string>) {
    async function* source() {
      yield* pieces;
    }
    const out: string[] = [];
    for await (const piece of scrubStream(source(), values)) out.push(piece);
    return out;
  }
  it("catches a value split across pieces and holds back only a tail that could start one", async () => {
    const values = new Set(["sk-live-0123456789"]);
    const out = await collect(["Hello. Your key is sk-li", "ve-0123", "456789 ok", " bye"], values);
    expect(out.join("")).toBe(`Hello. Your key is ${SCRUBBED} ok bye`);
    expect(out[0]).toBe("Hello. Your key is ");
  });
  it("passes text that cannot be part of a value at once", async () => {
    expect(await collect(["one ", "two ", "three"], new Set(["sk-live-0123456789"]))).toEqual([
      "one ",
      "two ",
      "three",
    ]);
    expect(partialSecretTail("the end s", ["sk-live-0123456789"])).toBe(1);
    expect(partialSecretTail("the end", ["sk-live-0123456789"])).toBe(0);
  });
});

describe("readSecretDestinations", () => {
  const destinations = readSecretDestinations({
    PROVIDER_VENDORB_URL: "https://api.vendor-b.example/v1",
    PROVIDER_VENDORB_REALTIME_URL: "wss://rt.vendor-b.example/v1/realtime",
    PROVIDER_VENDORA_URL: "https://api.vendor-a.example",
  });
  const vendorB = { secretType: SecretType.VENDORB_API_KEY, allowedHosts: [] };
  it("lets a key go to the configured hosts of its provider type, on any path", () => {
    expect(destinations.allows(vendorB, "https://api.vendor-b.example/other/v1")).toBe(true);
    expect(destinations.allows(vendorB, "wss://rt.vendor-b.example/x")).toBe(true);
    expect(destinations.providerHosts(SecretType.VENDORB_API_KEY)).toEqual([
      "api.vendor-b.example",
      "rt.vendor-b.example",
    ]);
  });
  it("refuses another provider's host, any other host, and anything when the type has no endpoint", () => {
    expect(destinations.allows(vendorB, "https://api.vendor-a.example/v1")).toBe(false);
    expect(destinations.allows(vendorB, "http://127.0.0.1:7001/")).toBe(false);
    expect(
      destinations.allows({ secretType: SecretType.VENDORE_API_KEY, allowedHosts: [] }, "https://x/"),
    ).toBe(false);
  });
  it("lets a key go to the hosts bound to it, exactly or under a *.domain", () => {
    const bound = { ...vendorB, allowedHosts: ["llm.corp.example", "*.models.example"] };
    expect(destinations.allows(bound, "https://llm.corp.example:8443/v1")).toBe(true);
    expect(destinations.allows(bound, "https://eu.models.example/v1")).toBe(true);
    expect(destinations.allows(bound, "https://models.example.attacker.example/v1")).toBe(false);
    expect(destinations.allows(bound, "https://corp.example/v1")).toBe(false);
  });
});

describe("secretHostProblem", () => {
  it.each(["llm.example.com", "*.example.com", "10.0.0.5", "[fd00::1]", "localhost"])("accepts %s", (h) => {
    expect(secretHostProblem(h)).toBeUndefined();
  });
  it.each([
    "https://x.example",
    "x.example:80",
    "x.example/v1",
    "a@x.example",
    "",
    "*.",
    "a b",
    "bücher.example",
  ])("refuses %j", (h) => {
    expect(secretHostProblem(h)).toBeDefined();
  });
});
