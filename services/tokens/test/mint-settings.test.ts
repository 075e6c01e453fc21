import { ConfigError } from "@avatar/runtime";
import { describe, expect, it } from "vitest";
import { readMintSettings } from "../src/mint-settings.js";

describe("readMintSettings", () => {
  it("keeps 1,024 presignatures ready unless told otherwise, and none when told 0", () => {
    expect(readMintSettings({}).presignatures).toBe(1024);
    // An empty value is an unset one, as for every setting (runtime config.ts).
    expect(readMintSettings({ SESSION_TOKEN_PRESIGNATURES: "" }).presignatures).toBe(1024);
    expect(readMintSettings({ SESSION_TOKEN_PRESIGNATURES: "0" }).presignatures).toBe(0);
    expect(readMintSettings({ SESSION_TOKEN_PRESIGNATURES: "65536" }).presignatures).toBe(65_536);
  });

  it.each(["-1", "65537", "1.5", "many"])("refuses SESSION_TOKEN_PRESIGNATURES=%j and names it", (value) => {
    const read = () => readMintSettings({ SESSION_TOKEN_PRESIGNATURES: value });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/SESSION_TOKEN_PRESIGNATURES/);
  });
});
