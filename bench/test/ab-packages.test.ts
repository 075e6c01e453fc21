import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { missingPackages } from "../src/ab/packages.js";

describe("missingPackages", () => {
  it("finds the suite's packages from a folder in the suite, and none from a folder outside the checkout", () => {
    expect(missingPackages(path.resolve(import.meta.dirname, "../../suite/ab/before"))).toEqual([]);
    expect(missingPackages(path.join(tmpdir(), "a-copy-of-suite-dist"))).toEqual(
      expect.arrayContaining(["opusscript", "@napi-rs/canvas", "node-datachannel", "@ffmpeg-installer/*"]),
    );
  });
});
