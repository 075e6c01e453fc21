import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { readGatewayConfig } from "../src/config.js";
import {
  clientAddress,
  forwardedProto,
  parseTrustedProxies,
  proxyTrust,
  trustEveryone,
  trustNobody,
} from "../src/http/trusted-proxies.js";

const req = (remoteAddress: string, headers: Record<string, string> = {}) =>
  ({ headers, socket: { remoteAddress } }) as unknown as IncomingMessage;

const ingress = parseTrustedProxies("10.0.0.0/8, fd00::/8, 192.0.2.7");

describe("trusted proxies", () => {
  it("parse CIDRs and single addresses of both families", () => {
    expect(ingress.trusts("10.1.2.3")).toBe(true);
    expect(ingress.trusts("::ffff:10.1.2.3")).toBe(true);
    expect(ingress.trusts("fd00::1")).toBe(true);
    expect(ingress.trusts("192.0.2.7")).toBe(true);
    expect(ingress.trusts("192.0.2.8")).toBe(false);
    expect(ingress.trusts("not an address")).toBe(false);
    expect(parseTrustedProxies(" , ").any).toBe(false);
  });

  it.each(["10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "fd00::/129", "example.com", "10.0.0.0/8/8"])(
    "reject %s",
    (bad) => {
      expect(() => parseTrustedProxies(bad)).toThrow(`"${bad}" is not an address or CIDR`);
    },
  );

  it("take the right-most address no trusted proxy added, never the client's own claims", () => {
    // The client claims 1.1.1.1; the ingress (10.0.0.5) appended the address it saw, 203.0.113.9.
    const behind = req("10.0.0.5", { "x-forwarded-for": "1.1.1.1, 203.0.113.9" });
    expect(clientAddress(behind, ingress)).toBe("203.0.113.9");
    // Two trusted hops: a load balancer (192.0.2.7) then the ingress.
    const twoHops = req("10.0.0.5", { "x-forwarded-for": "1.1.1.1, 203.0.113.9, 192.0.2.7" });
    expect(clientAddress(twoHops, ingress)).toBe("203.0.113.9");
    // A connection straight from the internet: its header is ignored.
    expect(clientAddress(req("198.51.100.1", { "x-forwarded-for": "10.9.9.9" }), ingress)).toBe(
      "198.51.100.1",
    );
    // A malformed hop stops the walk at the nearest trusted address.
    expect(clientAddress(req("10.0.0.5", { "x-forwarded-for": "junk" }), ingress)).toBe("10.0.0.5");
    expect(clientAddress(req("10.0.0.5"), ingress)).toBe("10.0.0.5");
  });

  it("take the scheme from X-Forwarded-Proto of a trusted proxy only", () => {
    expect(forwardedProto(req("10.0.0.5", { "x-forwarded-proto": "https" }), ingress)).toBe("https");
    expect(forwardedProto(req("198.51.100.1", { "x-forwarded-proto": "https" }), ingress)).toBeUndefined();
    expect(forwardedProto(req("10.0.0.5", { "x-forwarded-proto": "gopher" }), ingress)).toBeUndefined();
  });

  it("take the scheme the trusted proxy wrote, not one the client sent before it", () => {
    const appended = { "x-forwarded-proto": "https, http" };
    expect(forwardedProto(req("10.0.0.5", appended), ingress)).toBe("http");
    const standard = { forwarded: 'for=198.51.100.1;proto=https, for="[2001:db8::1]";proto=http' };
    expect(forwardedProto(req("10.0.0.5", standard), ingress)).toBe("http");
    expect(forwardedProto(req("10.0.0.5", { forwarded: "for=198.51.100.1;proto=https" }), ingress)).toBe(
      "https",
    );
    expect(forwardedProto(req("198.51.100.1", { forwarded: "proto=https" }), ingress)).toBeUndefined();
  });

  it("come from TRUSTED_PROXIES; TRUST_PROXY=true still trusts everyone, an empty list no one", () => {
    const config = (env: Record<string, string>) => proxyTrust(readGatewayConfig(env));
    expect(config({}).any).toBe(false);
    expect(config({ TRUST_PROXY: "true" })).toBe(trustEveryone);
    expect(config({ TRUSTED_PROXIES: "10.0.0.0/8", TRUST_PROXY: "true" }).trusts("198.51.100.1")).toBe(false);
    expect(config({ TRUST_PROXY: "false" })).toBe(trustNobody);
    expect(() => readGatewayConfig({ TRUSTED_PROXIES: "10.0.0.0/40" })).toThrow(/TRUSTED_PROXIES must be/);
  });
});
