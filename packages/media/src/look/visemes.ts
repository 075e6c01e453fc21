/**
 * The mouth shapes every look draws and the renderer chooses from: a Preston Blair style viseme set,
 * small enough for a 2D portrait and rich enough to read as speech. This module owns the names.
 */
export const VISEMES = ["rest", "MBP", "FV", "L", "WQ", "O", "E", "AI", "etc"] as const;
export type Viseme = (typeof VISEMES)[number];

/** Eye states of a look; a blink runs open, half, closed, half, open. */
export const EYE_STATES = ["open", "half", "closed"] as const;
export type EyeState = (typeof EYE_STATES)[number];

export const isViseme = (name: string): name is Viseme => (VISEMES as readonly string[]).includes(name);

/**
 * eSpeak's IPA phoneme names (as its phoneme events report them, stress marks included) to visemes.
 * Matching is on the phoneme's first letter after stress marks, which is enough for mouth shapes.
 */
const PHONEME_VISEMES: [RegExp, Viseme][] = [
  [/^[pbm]/, "MBP"],
  [/^[fv]/, "FV"],
  [/^[lɫ]/, "L"],
  [/^[wʍ]|^u|^ʊ/, "WQ"],
  [/^[oɔɒ]|^aʊ|^əʊ/, "O"],
  [/^[ɛeɪiæəɜʌɐ]|^j/, "E"],
  [/^[aɑ]/, "AI"],
  [/^[θðszʃʒtdnkgŋhɹrxçʔʧʤ]/, "etc"],
];

/** The viseme of one eSpeak phoneme; "rest" for pauses (an empty name) and anything unknown. */
export function visemeOfPhoneme(phoneme: string): Viseme {
  const name = phoneme.replace(/^[ˈˌ'",%=_:-]+/u, "");
  if (name === "") return "rest";
  for (const [pattern, viseme] of PHONEME_VISEMES) if (pattern.test(name)) return viseme;
  return "etc";
}
