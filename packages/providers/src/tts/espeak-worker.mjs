// Runs eSpeak-NG (WebAssembly) off the main thread. Each job is one run of the espeak-ng program,
// writing a WAV file into its in-memory file system. The program keeps global state between runs, so
// every run gets a fresh instance; instantiating one (copying its 18 MB of voice data in) costs more
// than speaking a sentence, so the next instance is prepared as soon as a run ends, off the critical
// path. The module itself is compiled once.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { parentPort } from "node:worker_threads";
import ESpeakNg from "espeak-ng";

const OUTPUT = "/out.wav";
const entry = createRequire(import.meta.url).resolve("espeak-ng");
const compiled = await WebAssembly.compile(await readFile(new URL("espeak-ng.wasm", pathToFileURL(entry))));

/** An initialized program whose main has not run yet. */
function prepare() {
  return new Promise((resolve, reject) => {
    const errors = [];
    let exports;
    ESpeakNg({
      noInitialRun: true,
      arguments: [],
      print: () => {},
      printErr: (line) => {
        if (!line.startsWith("program exited")) errors.push(line);
      },
      // Without this the runtime would set process.exitCode when the program fails.
      quit: (_status, toThrow) => {
        throw toThrow;
      },
      instantiateWasm: (imports, receive) => {
        WebAssembly.instantiate(compiled, imports).then((instance) => {
          exports = instance.exports;
          receive(instance, compiled);
        }, reject);
        return {};
      },
    }).then((program) => resolve({ program, exports, errors }), reject);
  });
}

/** Calls main(argc, argv) with the strings copied into the instance's memory; answers the exit status. */
function callMain({ program, exports }, args) {
  const encoder = new TextEncoder();
  const pointers = args.map((arg) => {
    const bytes = encoder.encode(arg);
    const pointer = exports.malloc(bytes.length + 1);
    const heap = new Uint8Array(exports.memory.buffer);
    heap.set(bytes, pointer);
    heap[pointer + bytes.length] = 0;
    return pointer;
  });
  const argv = exports.malloc(4 * (args.length + 1));
  const view = new DataView(exports.memory.buffer);
  for (const [i, pointer] of pointers.entries()) view.setUint32(argv + 4 * i, pointer, true);
  view.setUint32(argv + 4 * args.length, 0, true);
  try {
    return program._main(args.length, argv);
  } catch (err) {
    if (err?.name === "ExitStatus") return err.status;
    throw err;
  }
}

let next = prepare();

async function run(options, text) {
  const instance = await next.catch(() => prepare());
  try {
    // The text is one argv element after "--": whatever it holds, it is never read as an option.
    const status = callMain(instance, ["espeak-ng", ...options, "-w", OUTPUT, "--", text]);
    let wav;
    try {
      wav = instance.program.FS.readFile(OUTPUT);
    } catch {
      wav = undefined;
    }
    if (status !== 0 || !wav)
      throw new Error(instance.errors.join("; ") || `espeak-ng exited with ${status}`);
    return wav.slice();
  } finally {
    next = prepare();
    next.catch(() => {});
  }
}

// Timed runs use Echogarden's build of the same engine, whose library API reports phoneme events with
// their audio positions (the program above only writes a WAV). One instance is reused across runs.
let timedInstance;
async function runTimed({ voice, wordsPerMinute }, text) {
  if (!timedInstance) {
    const { default: EchogardenEspeak } = await import("@echogarden/espeak-ng-emscripten");
    const module = await EchogardenEspeak();
    timedInstance = new module.eSpeakNGWorker();
  }
  const worker = timedInstance;
  if (worker.set_voice(voice) !== 0) throw new Error(`unknown voice ${voice}`);
  worker.set_rate(Math.round(wordsPerMinute));
  const chunks = [];
  const events = [];
  worker.synthesize(text, (samples, list) => {
    if (samples?.length) chunks.push(samples);
    for (const e of list)
      if (e.type === "phoneme") events.push({ phoneme: e.id ?? "", atMs: e.audio_position });
    return false;
  });
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const pcm = new Int16Array(length);
  let at = 0;
  for (const c of chunks) {
    pcm.set(c, at);
    at += c.length;
  }
  return { pcm, sampleRate: worker.get_samplerate(), events };
}

// One job at a time, in order.
let queue = Promise.resolve();
parentPort.on("message", ({ id, options, text, timed }) => {
  if (timed) {
    queue = queue.then(() =>
      runTimed(timed, text).then(
        (result) => parentPort.postMessage({ id, timed: result }, [result.pcm.buffer]),
        (err) => parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
      ),
    );
    return;
  }
  queue = queue.then(() =>
    run(options, text).then(
      (wav) => parentPort.postMessage({ id, wav }, [wav.buffer]),
      (err) => parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
    ),
  );
});
