// Runs eSpeak NG off the main thread, one job at a time, in order. Every run gets a fresh engine (the
// engine's state would make the same text sound slightly different each time); making one costs about
// as much as speaking a sentence, so the next is prepared as soon as a run ends, off the critical path.
import { parentPort } from "node:worker_threads";
import { createEngine, speak } from "./espeak-engine.mjs";

function prepare() {
  const engine = createEngine();
  engine.catch(() => {});
  return engine;
}

let next = prepare();

async function run(job) {
  const engine = await next.catch(() => createEngine());
  try {
    return speak(engine, job);
  } finally {
    next = prepare();
  }
}

let queue = Promise.resolve();
parentPort.on("message", ({ id, job }) => {
  queue = queue.then(() =>
    run(job).then(
      (speech) => parentPort.postMessage({ id, speech }, [speech.pcm.buffer]),
      (err) => parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
    ),
  );
});
