import { describe, expect, it } from "vitest";
import {
  busyBySecond,
  type CpuProfile,
  packageOf,
  parseWindow,
  summarizeProfile,
} from "../src/profile/summarize.js";

const ROOT = "file:///repo";
const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

/**
 * (root) -> mint (ours) -> sign (node) ; mint -> query (pg, under node_modules) ; (idle).
 * Samples, 1 ms apart: mint's own work 1 ms, sign 2 ms, query 3 ms, idle 4 ms; the idle ones last.
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 5] },
    { id: 2, callFrame: frame("mintSessionToken", `${ROOT}/services/tokens/src/mint.ts`), children: [3, 4] },
    { id: 3, callFrame: frame("signOneShot", "node:internal/crypto/sig") },
    { id: 4, callFrame: frame("query", `${ROOT}/node_modules/.pnpm/pg@8/node_modules/pg/lib/client.js`) },
    { id: 5, callFrame: frame("(idle)", "") },
  ],
  samples: [2, 3, 3, 4, 4, 4, 5, 5, 5, 5],
  timeDeltas: Array(10).fill(1000),
};

const asObject = (rows: [string, number][]) => Object.fromEntries(rows);

describe("summarizeProfile", () => {
  it("gives self time by function and by package, largest first", () => {
    const s = summarizeProfile(profile);
    expect(s.total).toBe(10_000);
    expect(s.byFunction.map(([name]) => name.split(" ")[0])).toEqual([
      "(idle)",
      "query",
      "signOneShot",
      "mintSessionToken",
    ]);
    expect(asObject(s.byPackage)).toEqual({
      "(idle)": 4000,
      pg: 3000,
      node: 2000,
      "services/tokens": 1000,
    });
  });

  it("puts what a library or node did under the innermost frame of our own code that called it", () => {
    const s = summarizeProfile(profile);
    expect(s.byOwnFrame).toEqual([["mintSessionToken mint.ts:1", 6000]]);
  });

  it("keeps only the last seconds when asked", () => {
    // The last 5 ms: one query sample and the four idle ones.
    const s = summarizeProfile(profile, { lastSeconds: 0.005 });
    expect(s.total).toBe(5000);
    expect(asObject(s.byPackage)).toEqual({ "(idle)": 4000, pg: 1000 });
  });

  it("keeps a window from the start when asked", () => {
    // 2 ms to 5 ms: the second sign sample and the three query samples.
    const s = summarizeProfile(profile, { fromSeconds: 0.002, toSeconds: 0.005 });
    expect(s.total).toBe(3000);
    expect(asObject(s.byPackage)).toEqual({ node: 1000, pg: 2000 });
  });
});

describe("parseWindow", () => {
  it("reads the last seconds or a range from the start, and nothing else", () => {
    expect(parseWindow(undefined)).toEqual({});
    expect(parseWindow("12")).toEqual({ lastSeconds: 12 });
    expect(parseWindow("56-68")).toEqual({ fromSeconds: 56, toSeconds: 68 });
    expect(parseWindow("0.5-1.5")).toEqual({ fromSeconds: 0.5, toSeconds: 1.5 });
    for (const bad of ["68-56", "5-5", "0", "-3", "", " ", "abc", "1-", "-1-2"]) {
      expect(parseWindow(bad), bad).toBeUndefined();
    }
  });
});

describe("busyBySecond", () => {
  it("gives the share of each second that was not idle", () => {
    // Every sample 0.5 s apart: the first second mint and sign, the second sign and query, the third idle.
    const slow = { ...profile, samples: [2, 3, 3, 4, 5, 5], timeDeltas: Array(6).fill(500_000) };
    expect(busyBySecond(slow)).toEqual([1, 1, 0]);
  });
});

describe("packageOf", () => {
  it("names npm packages (scoped too), workspace folders and node", () => {
    expect(packageOf(`${ROOT}/node_modules/.pnpm/x/node_modules/@bufbuild/protobuf/dist/esm/create.js`)).toBe(
      "@bufbuild/protobuf",
    );
    expect(packageOf(`${ROOT}/packages/runtime/src/log.ts`)).toBe("packages/runtime");
    expect(packageOf(`${ROOT}/gateway/src/app.ts`)).toBe("gateway");
    expect(packageOf("node:internal/crypto/sig")).toBe("node");
  });
});
