// Runs eSpeak NG in a process of its own (EspeakRunner forks it), one message at a time, in order. Each
// voice has a resettable engine, made at its first job or when the runner asks ahead (`prepare`): every
// run is a fresh engine's, so the same text gives the same samples. An engine that failed or was spent
// (a very long text) is replaced at the voice's next job.
import { createResettableEngine } from "./espeak-engine.mjs";

/**
 * Voices whose engine is kept, the least recently used dropped: each holds ~27 MB (its memory, the code
 * V8 compiled for it, the part of its memory it is reset from). A worker speaking one voice: 112 MiB.
 */
const KEPT_VOICES = 2;
/**
 * Spoken once by a prepared engine: V8 compiles the engine's JavaScript for each instance as it runs, and
 * its first sentence costs 10-20 times a later one. Said now, below the service's priority, not as an
 * answer begins.
 */
const WARM_UP = { text: "The quick brown fox jumps over the lazy dog.", wordsPerMinute: 175 };

/** voice -> Promise of its engine (undefined: no such voice). */
const engines = new Map();

function engineFor(voice) {
  let engine = engines.get(voice);
  engines.delete(voice);
  engine ??= createResettableEngine(voice);
  engines.set(voice, engine);
  while (engines.size > KEPT_VOICES) engines.delete(engines.keys().next().value);
  return engine;
}

async function run(job) {
  let keep = false;
  try {
    const engine = await engineFor(job.voice);
    if (!engine) throw new Error(`voice does not exist: ${job.voice}`);
    const speech = engine.speak(job);
    keep = !engine.spent;
    return speech;
  } finally {
    if (!keep) engines.delete(job.voice);
  }
}

async function prepare(voice) {
  await run({ ...WARM_UP, voice }).catch(() => {});
}

let queue = Promise.resolve();
process.on("message", ({ id, job, prepare: voice }) => {
  queue = queue.then(() =>
    voice !== undefined
      ? prepare(voice)
      : run(job).then(
          (speech) => process.send({ id, speech }),
          (err) => process.send({ id, error: err instanceof Error ? err.message : String(err) }),
        ),
  );
});
// The service that forked this process is gone (or closed it): nothing more will be asked.
process.on("disconnect", () => process.exit(0));
