import { type AvatarLook, AvatarLookSchema } from "@avatar/contracts/catalog";
import { clone, toBinary } from "@bufbuild/protobuf";
import { createCanvas, type Image } from "@napi-rs/canvas";
import { describe, expect, it } from "vitest";
import { decodeLook } from "../src/look/decode-look.js";
import { generateLook } from "../src/look/generate/generate-look.js";
import { geometryOf } from "../src/look/generate/geometry.js";
import { LookParamsError, resolveLookParams } from "../src/look/generate/vocabulary.js";
import { LookError } from "../src/look/look-error.js";
import { VISEMES, visemeOfPhoneme } from "../src/look/visemes.js";
import { frameFigure } from "../src/render/framing.js";
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

  it("lets long hair fall behind the neck: the head layer leaves the neck bare, the body layer has hair", () => {
    const scale = 0.3;
    const request = { seed: "elena", presentation: "feminine", hairStyle: "long", hairColor: "black" };
    const look = decodeLook(generateLook(request, scale));
    const g = geometryOf(resolveLookParams(request));
    const alphaAt = (image: Image, x: number, y: number) => {
      const ctx = createCanvas(image.width, image.height).getContext("2d");
      ctx.drawImage(image, 0, 0);
      return ctx.getImageData(Math.round(x * scale), Math.round(y * scale), 1, 1).data;
    };
    // Under the chin, across the neck: nothing of the head layer (no hair in front of the neck).
    for (const dx of [-0.8, -0.4, 0, 0.4, 0.8])
      expect(alphaAt(look.head, g.cx + dx * g.neckW, g.chinY + 30)[3]).toBe(0);
    // Beside the neck, above the collar: the hair behind it, dark, in the body layer.
    const behind = alphaAt(look.body, g.cx + g.neckW + 20, g.chinY + 40);
    expect(behind[3]).toBe(255);
    expect(Math.max(behind[0] ?? 0, behind[1] ?? 0, behind[2] ?? 0)).toBeLessThan(60);
  });

  it("is framed as a presenter: eyes about a third from the top, the face large, in both orientations", () => {
    const look = decodeLook(testLook());
    for (const [width, height] of [
      [1280, 720],
      [720, 1280],
    ] as const) {
      const f = frameFigure(look, width, height);
      const eyesY = f.offsetY + look.anchors.eyes.y * f.scale;
      const mouthY = f.offsetY + look.anchors.mouth.y * f.scale;
      expect(eyesY / height).toBeGreaterThan(0.3);
      expect(eyesY / height).toBeLessThan(0.4);
      expect((mouthY - eyesY) / height).toBeGreaterThan(width > height ? 0.14 : 0.09);
      // The figure reaches the bottom edge.
      expect(f.offsetY + look.height * f.scale).toBeGreaterThanOrEqual(height);
    }
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
