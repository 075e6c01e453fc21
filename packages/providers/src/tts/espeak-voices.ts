/**
 * Maps a session language (BCP 47, e.g. "en", "pt-BR", "zh-TW") to an eSpeak-NG voice of the
 * WebAssembly build. Unknown languages fall back to English (en-us).
 */

// The engine's voices (by file name or language, as `selectVoice` takes them), minus constructed and
// historical languages.
export const ESPEAK_VOICES: ReadonlySet<string> = new Set(
  (
    "af am an ar as az ba be bg bn bpy bs ca cmn cs cv cy da de el en-029 en-gb en-gb-scotland en-gb-x-rp " +
    "en-us en-us-nyc eo es es-419 et eu fa fi fr-be fr-ch fr-fr ga gd gn gu hak haw he hi hr ht hu hy hyw " +
    "ia id is it ja ka kk kl kn ko kok ku ky la lb lt ltg lv mi mk ml mr ms mt my nb ne nl om or pa pap pl " +
    "pt pt-br qu ro ru sd shn si sk sl sq sr sv sw ta te th tk tn tr tt ug uk ur uz vi yue"
  ).split(" "),
);

/** Languages whose bare code names no voice, or names a less expected one. */
const ALIASES: Record<string, string> = {
  en: "en-us",
  "en-au": "en-gb",
  "en-ie": "en-gb",
  "en-in": "en-gb",
  "en-nz": "en-gb",
  "en-za": "en-gb",
  "en-ca": "en-us",
  fr: "fr-fr",
  "fr-ca": "fr-fr",
  zh: "cmn",
  "zh-hk": "yue",
  "es-mx": "es-419",
  "es-us": "es-419",
  no: "nb",
  nn: "nb",
  iw: "he",
};

export const DEFAULT_ESPEAK_VOICE = "en-us";

export function espeakVoiceFor(language: string | undefined): string {
  const tag = (language ?? "").trim().toLowerCase().replaceAll("_", "-");
  if (!tag) return DEFAULT_ESPEAK_VOICE;
  const primary = tag.split("-")[0] as string;
  const region = tag.split("-").find((part, i) => i > 0 && /^([a-z]{2}|\d{3})$/.test(part));
  const candidates = [tag, region ? `${primary}-${region}` : undefined, primary];
  for (const candidate of candidates) {
    if (!candidate) continue;
    const voice = ALIASES[candidate] ?? candidate;
    if (ESPEAK_VOICES.has(voice)) return voice;
  }
  return DEFAULT_ESPEAK_VOICE;
}
