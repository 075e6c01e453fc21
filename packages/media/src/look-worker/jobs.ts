import { AvatarLookSchema } from "@avatar/contracts/catalog";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { VirtualClock } from "../clock.js";
import { type Orientation, type VideoQualityName, videoSize } from "../frames.js";
import { type DecodedLook, decodeLook } from "../look/decode-look.js";
import { generateLook } from "../look/generate/generate-look.js";
import { LookParamsError, type LookRequest } from "../look/generate/vocabulary.js";
import { LookError } from "../look/look-error.js";
import { PortraitRenderer } from "../render/portrait-renderer.js";
import { frameToPng } from "../render/poster.js";
import { type LookRaster, rasterizeLook } from "../render/raster.js";

/**
 * The work a look worker thread does (thread.ts runs these): the CPU-heavy drawing that
 * would stall a process's event loop for seconds. Results come back with their buffers transferred.
 */

export type LookJob =
  | { type: "rasterize"; look: Uint8Array; lookKey: string; width: number; height: number }
  | { type: "poster"; look: Uint8Array; lookKey: string; quality: VideoQualityName; orientation: Orientation }
  | { type: "generate"; request: LookRequest; scale?: number }
  | { type: "check"; look: Uint8Array };

/** A failure as it crosses threads: the kind says which error to rebuild. */
export interface JobFailure {
  kind: "look" | "params" | "error";
  field?: string;
  message: string;
}

export type JobOutcome =
  | { ok: true; value: LookRaster | Uint8Array | null; transfer: ArrayBuffer[] }
  | { ok: false; failure: JobFailure };

// Decoded looks (PNG layers as images) of the latest few looks, so another size of the same look
// skips decoding.
const decoded = new Map<string, DecodedLook>();
const DECODED_KEPT = 8;

export function runLookJob(job: LookJob): JobOutcome {
  try {
    switch (job.type) {
      case "rasterize": {
        const raster = rasterizeLook(decodedLook(job.look, job.lookKey), job.width, job.height);
        return { ok: true, value: raster, transfer: rasterBuffers(raster) };
      }
      case "poster": {
        const size = videoSize(job.quality, job.orientation);
        const raster = rasterizeLook(decodedLook(job.look, job.lookKey), size.width, size.height);
        const renderer = new PortraitRenderer(raster, { clock: new VirtualClock(), seed: "poster" });
        const png = new Uint8Array(frameToPng(renderer.still("rest", 0, "open")));
        return { ok: true, value: png, transfer: [png.buffer as ArrayBuffer] };
      }
      case "check": {
        decodeLook(fromBinary(AvatarLookSchema, job.look));
        return { ok: true, value: null, transfer: [] };
      }
      case "generate": {
        const bytes = toBinary(AvatarLookSchema, generateLook(job.request, job.scale));
        return { ok: true, value: bytes, transfer: [bytes.buffer as ArrayBuffer] };
      }
    }
  } catch (err) {
    if (err instanceof LookError)
      return { ok: false, failure: { kind: "look", field: err.field, message: err.message } };
    if (err instanceof LookParamsError)
      return { ok: false, failure: { kind: "params", field: err.field, message: err.message } };
    return {
      ok: false,
      failure: { kind: "error", message: err instanceof Error ? err.message : String(err) },
    };
  }
}

function decodedLook(bytes: Uint8Array, lookKey: string): DecodedLook {
  let look = decoded.get(lookKey);
  if (!look) {
    look = decodeLook(fromBinary(AvatarLookSchema, bytes));
    decoded.set(lookKey, look);
    if (decoded.size > DECODED_KEPT) decoded.delete(decoded.keys().next().value as string);
  }
  return look;
}

/** Every distinct buffer a raster holds (each transferred once). */
export function rasterBuffers(raster: LookRaster): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const add = (a: ArrayBufferView) => buffers.add(a.buffer as ArrayBuffer);
  for (const base of raster.bases) add(base.data);
  const sprites = [
    ...raster.heads,
    ...Object.values(raster.eyes).flatMap((list) => list.map((p) => p.sprite)),
    ...raster.mouths.flatMap((m) => m.byTilt.map((p) => p.sprite)),
  ];
  for (const s of sprites) {
    for (const a of [s.y, s.u, s.v, s.alphaY, s.alphaC]) add(a);
    for (const spans of [s.spansY, s.spansC])
      for (const a of [spans.rowStart, spans.opaqueCount, spans.spans]) add(a);
  }
  return [...buffers];
}
