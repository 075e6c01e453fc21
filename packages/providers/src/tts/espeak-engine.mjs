// eSpeak NG through its library API: Echogarden's build of the engine (`@echogarden/espeak-ng-emscripten`,
// GPL-3.0, compiled to JavaScript), which reports each phoneme with its position in the audio. Plain
// JavaScript so that its worker process can load it without a TypeScript loader (types: espeak-engine.d.mts).
//
// An engine keeps state between runs (its noise generator: the same text twice gives different samples),
// so callers use a fresh engine per run to stay deterministic. The voice data (24 MB) is read once per
// process and shared by its engines.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import EchogardenEspeak from "@echogarden/espeak-ng-emscripten";

const DATA_FILE = join(
  dirname(createRequire(import.meta.url).resolve("@echogarden/espeak-ng-emscripten")),
  "espeak-ng.data",
);
let voiceData;

/** A ready engine (its module instantiated and initialized), not yet used. */
export async function createEngine() {
  voiceData ??= readFile(DATA_FILE).then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const data = await voiceData;
  const module = await EchogardenEspeak({
    getPreloadedPackage: () => data,
    print: () => {},
    printErr: () => {},
  });
  return new module.eSpeakNGWorker();
}

/**
 * Selects a voice as the espeak-ng program's `-v` does: by voice file name (`en-us` is `gmw/en-US`),
 * else by language (`fr-fr` is spoken by `roa/fr`). False when no voice has that name or language.
 */
export function selectVoice(engine, voice) {
  return engine.set_voice(voice) === 0 || engine.set_voice("", voice) === 0;
}

/** The engine's text for ours: plain text, never markup, ending with its sentence's pause. */
export function engineText(text) {
  const plain = text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL would cut the C string short.
    .replace(/[\u0000-\u001f\u007f]/g, " ")
    // The library reads SSML: a tag in the text (a <voice>, a <break>) must be spoken, not obeyed.
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
  // The library drops the pause after the last clause (the program keeps it: its end-pause flag); an
  // empty clause after the text brings it back, so sentences spoken one by one keep their pauses.
  return `${plain} .`;
}

/** Speaks one text: 16-bit mono samples at the engine's rate, each phoneme's start in ms. */
export function speak(engine, { text, voice, wordsPerMinute }) {
  if (!selectVoice(engine, voice)) throw new Error(`voice does not exist: ${voice}`);
  engine.set_rate(Math.round(wordsPerMinute));
  const chunks = [];
  const events = [];
  engine.synthesize(engineText(text), (samples, list) => {
    if (samples?.length) chunks.push(samples);
    for (const e of list)
      if (e.type === "phoneme") events.push({ phoneme: e.id ?? "", atMs: e.audio_position });
    return false;
  });
  const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    pcm.set(c, at);
    at += c.length;
  }
  return { pcm, sampleRate: engine.get_samplerate(), events };
}
