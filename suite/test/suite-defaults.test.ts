import { readConfig } from "@avatar/runtime";
import { sessionSettings } from "@avatar/sessions";
import { describe, expect, it } from "vitest";
import { SUITE_DEFAULTS } from "../src/start-suite.js";

/** The suite's own defaults name real settings, read as the services read them. */
describe("SUITE_DEFAULTS", () => {
  it("sets one insert of new sessions in flight, a setting the sessions service reads", () => {
    expect(readConfig(sessionSettings, { ...SUITE_DEFAULTS }).SESSIONS_CREATION_INSERTS_IN_FLIGHT).toBe(1);
    expect(readConfig(sessionSettings, {}).SESSIONS_CREATION_INSERTS_IN_FLIGHT).toBe(0);
  });
});
