import { type AvatarLook, AvatarLookSchema } from "@avatar/contracts/catalog";
import { clone, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { decodeLook, LookError } from "../src/look/decode-look.js";
import { generateLook } from "../src/look/generate/generate-look.js";
import { LookParamsError, resolveLookParams } from "../src/look/generate/vocabulary.js";
import { VISEMES, visemeOfPhoneme } from "../src/look/visemes.js";
import { testLook } from "./support.js";

function refused(change: (look: AvatarLook) => void): LookError {
  const look = clone(AvatarLookSchema, testLook());
  change(look);
  try {
    decodeLook(look);
  } catch (err) {
    if (err instanceof LookError) return err;
    throw err;
  }
  throw new Error("the look was accepted");
}

describe("decodeLook", () => {
  it("accepts a generated look with every viseme and eye state", () => {
    const look = decodeLook(testLook());
    expect(new Set(look.mouths.map((m) => m.viseme))).toEqual(new Set(VISEMES));
    expect(Object.keys(look.eyes).sort()).toEqual(["closed", "half", "open"]);
  });

  it("refuses a corrupt PNG, naming the layer", () => {
    const err = refused((l) => {
      l.headPng = l.headPng.slice(0, 200);
    });
    expect(err.message).toBe("head_png: is truncated");
    const notPng = refused((l) => {
      l.bodyPng = new TextEncoder().encode("GIF89a not a png");
    });
    expect(notPng.message).toBe("body_png: is not a PNG image");
  });

  it("refuses a look missing visemes or eye states", () => {
    const err = refused((l) => {
      l.mouths = l.mouths.filter((m) => m.name !== "O" && m.name !== "FV");
    });
    expect(err.message).toBe("mouths: missing visemes FV, O");
    expect(refused((l) => (l.eyes = l.eyes.filter((e) => e.name !== "closed"))).message).toBe(
      "eyes: missing eye states closed",
    );
    expect(refused((l) => ((l.mouths[0] as { name: string }).name = "ZZ")).field).toBe("mouths[0].name");
  });

  it("refuses anchors outside the canvas and layers of the wrong size", () => {
    const err = refused((l) => {
      if (l.anchors?.mouth) l.anchors.mouth.x = l.width + 5;
    });
    expect(err.field).toBe("anchors.mouth");
    expect(err.message).toContain("outside");
    expect(refused((l) => (l.anchors = undefined)).field).toBe("anchors.mouth");
    expect(refused((l) => (l.width += 2)).field).toBe("body_png");
    expect(refused((l) => (l.backgroundPng = l.headPng)).message).toContain("opaque");
  });
});

describe("generateLook", () => {
  it("is deterministic: the same seed gives the same bytes, another seed another person", () => {
    const a = toBinary(AvatarLookSchema, generateLook({ seed: "ada" }, 0.3));
    const b = toBinary(AvatarLookSchema, generateLook({ seed: "ada" }, 0.3));
    const c = toBinary(AvatarLookSchema, generateLook({ seed: "ben" }, 0.3));
    expect(Buffer.compare(a, b)).toBe(0);
    expect(Buffer.compare(a, c)).not.toBe(0);
  });

  it("takes named choices and refuses unknown ones", () => {
    const params = resolveLookParams({ seed: "x", skinTone: "deep", hairStyle: "bun", outfit: "blazer" });
    expect(params).toMatchObject({ skinTone: "deep", hairStyle: "bun", outfit: "blazer" });
    expect(() => resolveLookParams({ seed: "x", hairStyle: "mohawk" })).toThrow(LookParamsError);
  });
});

describe("visemeOfPhoneme", () => {
  it("maps eSpeak's phonemes to mouth shapes", () => {
    expect(["m", "b", "p", "f", "v", "l", "w", "ˈoʊ", "iː", "ˈaɪ", "s", ""].map(visemeOfPhoneme)).toEqual([
      "MBP",
      "MBP",
      "MBP",
      "FV",
      "FV",
      "L",
      "WQ",
      "O",
      "E",
      "AI",
      "etc",
      "rest",
    ]);
  });
});
