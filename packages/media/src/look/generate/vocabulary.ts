import { seededRandom } from "../../random.js";
import { LookFieldError } from "../look-error.js";

/**
 * The generator's choices, by name: what a LookSeed may ask for. Everything not asked for is drawn from
 * the seed, so the same seed always gives the same person.
 */

export const SKIN_TONES = {
  porcelain: "#f5d6c6",
  light: "#eebf9f",
  beige: "#e0a982",
  tan: "#c98d63",
  olive: "#b5875c",
  brown: "#956040",
  deep: "#70432a",
  ebony: "#4f2f1e",
} as const;

export const HAIR_COLORS = {
  black: "#1d1a1c",
  espresso: "#33231b",
  brown: "#5b3a24",
  auburn: "#7b3722",
  copper: "#a0522d",
  blonde: "#c9a066",
  grey: "#9a9794",
} as const;

export const HAIR_STYLES = {
  crop: "masculine",
  sidepart: "masculine",
  buzz: "masculine",
  curlytop: "masculine",
  long: "feminine",
  bob: "feminine",
  bun: "feminine",
  curls: "feminine",
} as const;

export const OUTFITS = ["blazer", "sweater", "vneck", "turtleneck", "shirt"] as const;
export const BACKGROUNDS = ["studio", "office", "lounge", "slate", "sunset"] as const;

export type SkinTone = keyof typeof SKIN_TONES;
export type HairColor = keyof typeof HAIR_COLORS;
export type HairStyle = keyof typeof HAIR_STYLES;
export type Outfit = (typeof OUTFITS)[number];
export type Background = (typeof BACKGROUNDS)[number];
export type Presentation = "feminine" | "masculine";

export interface LookParams {
  seed: string;
  presentation: Presentation;
  skinTone: SkinTone;
  hairStyle: HairStyle;
  hairColor: HairColor;
  outfit: Outfit;
  background: Background;
  /** Clothing colours, eye colour and small variations, all from the seed. */
  outfitColor: string;
  shirtColor: string;
  eyeColor: string;
  /** -1..1 variations of face shape. */
  jaw: number;
  browWeight: number;
  stubble: boolean;
  /** Background hue family. */
  backdropHue: number;
}

export interface LookRequest {
  seed: string;
  presentation?: string;
  skinTone?: string;
  hairStyle?: string;
  hairColor?: string;
  outfit?: string;
  background?: string;
}

/** A request from snake_case fields (a LookSeed in JSON, as in the catalog file). */
export function lookRequestOf(fields: Record<string, string | undefined>): LookRequest {
  return {
    seed: fields.seed ?? "",
    presentation: fields.presentation,
    skinTone: fields.skin_tone,
    hairStyle: fields.hair_style,
    hairColor: fields.hair_color,
    outfit: fields.outfit,
    background: fields.background,
  };
}

/** A look request naming a choice the generator does not know. */
export class LookParamsError extends LookFieldError {
  override name = "LookParamsError";
}

const OUTFIT_COLORS = [
  "#22304a",
  "#363a42",
  "#9c7650",
  "#2e4a3d",
  "#5a2f3a",
  "#40577a",
  "#6b6f76",
  "#b85c4a",
];
const SHIRT_COLORS = ["#f4f4f1", "#dfe8f3", "#f3ece2", "#e9e2ee"];
const EYE_COLORS = ["#3b2a20", "#4a3426", "#2f4f6d", "#4c6b3b", "#6b4a2c", "#2a2a2a"];

/** Every choice made: the ones asked for (checked) and the rest from the seed. */
export function resolveLookParams(request: LookRequest): LookParams {
  const random = seededRandom(`look:${request.seed}`);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const named = <T extends string>(
    field: string,
    value: string | undefined,
    names: readonly T[],
    fallback: () => T,
  ): T => {
    if (value === undefined || value === "") return fallback();
    if (!(names as readonly string[]).includes(value)) {
      throw new LookParamsError(field, `unknown ${field} "${value}" (one of ${names.join(", ")})`);
    }
    return value as T;
  };
  const presentation = named<Presentation>(
    "presentation",
    request.presentation,
    ["feminine", "masculine"],
    () => (random() < 0.5 ? "feminine" : "masculine"),
  );
  const skinTone = named("skin_tone", request.skinTone, Object.keys(SKIN_TONES) as SkinTone[], () =>
    pick(Object.keys(SKIN_TONES) as SkinTone[]),
  );
  const styles = (Object.keys(HAIR_STYLES) as HairStyle[]).filter((s) => HAIR_STYLES[s] === presentation);
  const hairStyle = named("hair_style", request.hairStyle, Object.keys(HAIR_STYLES) as HairStyle[], () =>
    pick(styles),
  );
  const darkSkin = ["brown", "deep", "ebony"].includes(skinTone);
  const hairChoices: HairColor[] = darkSkin
    ? ["black", "espresso", "black", "brown"]
    : (Object.keys(HAIR_COLORS) as HairColor[]);
  const hairColor = named("hair_color", request.hairColor, Object.keys(HAIR_COLORS) as HairColor[], () =>
    pick(hairChoices),
  );
  const outfit = named("outfit", request.outfit, OUTFITS, () => pick(OUTFITS));
  const background = named("background", request.background, BACKGROUNDS, () => pick(BACKGROUNDS));
  return {
    seed: request.seed,
    presentation,
    skinTone,
    hairStyle,
    hairColor,
    outfit,
    background,
    outfitColor: pick(OUTFIT_COLORS),
    shirtColor: pick(SHIRT_COLORS),
    eyeColor: darkSkin ? pick(EYE_COLORS.slice(0, 2)) : pick(EYE_COLORS),
    jaw: random() * 2 - 1,
    browWeight: random(),
    stubble: presentation === "masculine" && random() < 0.35,
    backdropHue: random(),
  };
}
