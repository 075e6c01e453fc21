// eSpeak NG through its library API: Echogarden's build of the engine (`@echogarden/espeak-ng-emscripten`,
// GPL-3.0, compiled to JavaScript), which reports each phoneme with its position in the audio. Plain
// JavaScript so that its worker process can load it without a TypeScript loader (types: espeak-engine.d.mts).
//
// An engine keeps state between runs (its noise generator: the same text twice gives different samples),
// so every run is a fresh engine's: a new one (createEngine) or one put back as it was before its first
// run (createResettableEngine). The voice data (24 MB) is read once per process and shared by its engines.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import EchogardenEspeak from "@echogarden/espeak-ng-emscripten";

const DATA_FILE = join(
  dirname(createRequire(import.meta.url).resolve("@echogarden/espeak-ng-emscripten")),
  "espeak-ng.data",
);
let voiceData;

async function instantiate() {
  voiceData ??= readFile(DATA_FILE).then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const data = await voiceData;
  return EchogardenEspeak({
    getPreloadedPackage: () => data,
    print: () => {},
    printErr: () => {},
  });
}

/** A ready engine (its module instantiated and initialized), not yet used. */
export async function createEngine() {
  const module = await instantiate();
  return new module.eSpeakNGWorker();
}

/** The string buffer a resettable engine is made with (bytes): a longer text spends the engine. */
export const RESETTABLE_TEXT_BYTES = 16_384;

/**
 * An engine for one voice, put back before every run into the state it had once the voice was selected
 * (the ~1 MB of its 17 MB of memory written by then copied back, the rest zeroed: ~1 ms): each run gives
 * exactly what a fresh engine gives, without making one. A fresh engine is not only ~100 ms to make: V8
 * compiles the engine's JavaScript again for every instance, so a sentence took 100-300 ms of CPU on one
 * against 5-15 on a reset one.
 *
 * The module's own JavaScript keeps a little state about that memory: the buffer through which strings
 * cross into the engine, which it grows (allocating) at the call after a longer string. It is grown here
 * to RESETTABLE_TEXT_BYTES before the copy is taken. A run that allocates all the same (a longer text)
 * is still a fresh engine's run, but its engine is `spent`: the copy no longer matches that state, and
 * the engine refuses further runs. Undefined when no voice has that name or language.
 */
export async function createResettableEngine(voice) {
  const module = await instantiate();
  const engine = new module.eSpeakNGWorker();
  // No voice has this name; the call after it grows the string buffer to hold it.
  engine.set_voice("-".repeat(RESETTABLE_TEXT_BYTES));
  if (!selectVoice(engine, voice)) return undefined;
  // What the memory holds then: its first MB or so, the rest zero (kept as the length).
  const heap = module.HEAPU8;
  let written = heap.length;
  while (written > 0 && heap[written - 1] === 0) written--;
  const memory = heap.slice(0, written);
  let spent = false;
  // The module's JavaScript allocates through these (looked up at each call).
  for (const name of ["_webidl_malloc", "_webidl_free"]) {
    const allocator = module[name];
    module[name] = (...args) => {
      spent = true;
      return allocator(...args);
    };
  }
  return {
    voice,
    get spent() {
      return spent;
    },
    speak(job) {
      if (spent) throw new Error("this engine can no longer be reset");
      if (job.voice !== voice) throw new Error(`this engine speaks ${voice}, not ${job.voice}`);
      // The module's current view: a run that grew the memory replaced it. Memory grown since is
      // zeroed with the rest, as a fresh engine's would be when it grows.
      const now = module.HEAPU8;
      now.set(memory);
      now.fill(0, memory.length);
      return synthesize(engine, job);
    },
  };
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
export function speak(engine, job) {
  if (!selectVoice(engine, job.voice)) throw new Error(`voice does not exist: ${job.voice}`);
  return synthesize(engine, job);
}

/** Speaks one text in the voice already selected. */
function synthesize(engine, { text, wordsPerMinute }) {
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
