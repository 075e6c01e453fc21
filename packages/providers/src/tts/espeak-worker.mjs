// Runs eSpeak NG in a process of its own (EspeakRunner forks it), one job at a time, in order. Every run
// gets a fresh engine (the engine's state would make the same text sound slightly different each time);
// making one costs about as much as speaking a sentence, so the next is prepared as soon as a run ends,
// off the critical path.
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
process.on("message", ({ id, job }) => {
  queue = queue.then(() =>
    run(job).then(
      (speech) => process.send({ id, speech }),
      (err) => process.send({ id, error: err instanceof Error ? err.message : String(err) }),
    ),
  );
});
// The service that forked this process is gone (or closed it): nothing more will be asked.
process.on("disconnect", () => process.exit(0));
