import { ConfigError } from "@avatar/runtime";
import { describe, expect, it } from "vitest";
import { readTransportAConfig } from "../src/index.js";

const SECRET = "s3cr3t-value-that-must-not-leak";
const full = {
  TRANSPORT_A_URL: "http://transport-a:7880",
  TRANSPORT_A_API_KEY: "devkey",
  TRANSPORT_A_API_SECRET: SECRET,
};

describe("TRANSPORT_A_* settings", () => {
  it("none set: no server", () => {
    expect(readTransportAConfig({})).toBeUndefined();
    expect(readTransportAConfig({ TRANSPORT_A_URL: "", TRANSPORT_A_API_KEY: "" })).toBeUndefined();
  });

  it("all three: the server, with clients given its WebSocket URL (or TRANSPORT_A_PUBLIC_URL)", () => {
    const config = readTransportAConfig(full);
    expect(config).toMatchObject({ url: "http://transport-a:7880", publicUrl: "ws://transport-a:7880" });
    expect(config?.apiKey).toBe("devkey");
    expect(config?.apiSecret).toBe(SECRET);
    const behindTls = readTransportAConfig({ ...full, TRANSPORT_A_PUBLIC_URL: "https://sfu.example.com/" });
    expect(behindTls?.publicUrl).toBe("wss://sfu.example.com");
  });

  it("the secret stays out of JSON and of the object's keys", () => {
    const config = readTransportAConfig(full);
    expect(JSON.stringify(config)).not.toContain(SECRET);
    expect(Object.keys(config ?? {})).not.toContain("apiSecret");
  });

  it("a partial configuration is refused at start, naming what is missing and showing no value", () => {
    const read = () =>
      readTransportAConfig({ TRANSPORT_A_URL: full.TRANSPORT_A_URL, TRANSPORT_A_API_SECRET: SECRET });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/TRANSPORT_A_API_KEY is missing/);
    try {
      read();
    } catch (err) {
      expect((err as Error).message).not.toContain(SECRET);
    }
    expect(() => readTransportAConfig({ TRANSPORT_A_PUBLIC_URL: "wss://x" })).toThrow(
      /without TRANSPORT_A_URL/,
    );
  });

  it("a URL that is not ws, wss, http or https is refused", () => {
    expect(() => readTransportAConfig({ ...full, TRANSPORT_A_URL: "ftp://transport-a" })).toThrow(
      /TRANSPORT_A_URL must be a URL \(ws:, wss:, http:, https:\)/,
    );
    expect(() => readTransportAConfig({ ...full, TRANSPORT_A_URL: "transport-a:7880" })).toThrow(ConfigError);
  });
});
