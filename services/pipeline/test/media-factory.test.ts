import { createRequire } from "node:module";
import { SessionConfigSchema } from "@avatar/contracts/common";
import { WhepRequestSchema, WhepStatus } from "@avatar/contracts/pipeline";
import { SessionSchema } from "@avatar/contracts/sessions";
import { MEDIA_NATIVE_PACKAGES, unresolvedMediaPackages } from "@avatar/media/native-packages";
import { createLogger, type LogFields } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { avatarMediaFactory } from "../src/media/media-factory.js";
import type { SessionMediaContext } from "../src/media/session-media.js";
import { ManualClock } from "./manual-clock.js";

/** The media factory when the worker's media stack is there, missing or broken: what it says and how often. */

function logs() {
  const lines: LogFields[] = [];
  const log = createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) });
  return { lines, log };
}

function context(log: SessionMediaContext["log"], id: string): SessionMediaContext {
  return {
    session: create(SessionSchema, { id }),
    config: create(SessionConfigSchema, {}),
    log: log.child({ sessionId: id }),
    clock: new ManualClock(),
  };
}

const catalog = { getAvatarLook: async () => ({}) } as never;
const offer = create(WhepRequestSchema, {});

/**
 * A factory whose package lookup answers `missing` and whose stack loader runs `stack`, counting both,
 * with its log lines kept.
 */
function rig(options: { missing?: string[]; stack?: () => unknown; mediaOn?: boolean }) {
  const { lines, log } = logs();
  const counts = { lookups: 0, loads: 0 };
  const factory = avatarMediaFactory({
    catalog,
    env: {},
    log,
    mediaOn: options.mediaOn ?? true,
    unresolved: () => {
      counts.lookups++;
      return options.missing ?? [];
    },
    loadStack: async () => {
      counts.loads++;
      return (options.stack ?? (() => ({})))() as never;
    },
  });
  const media = (id: string) => factory(context(log, id));
  return { lines, counts, media };
}

describe("avatarMediaFactory", () => {
  it("with the stack's packages not found, says which once at build and never loads it", async () => {
    const { lines, counts, media } = rig({ missing: ["opusscript", "node-datachannel"] });
    expect(lines).toEqual([
      expect.objectContaining({ level: "error", missing: ["opusscript", "node-datachannel"] }),
    ]);
    lines.length = 0;
    for (const id of ["s1", "s2"]) {
      const answer = await (await media(id)).whep(offer);
      expect(answer.status).toBe(WhepStatus.UNAVAILABLE);
      expect(answer.message).toMatch(/media stack/);
    }
    expect(counts.loads).toBe(0);
    expect(lines.map((l) => [l.level, l.sessionId, "err" in l])).toEqual([
      ["warn", "s1", false],
      ["warn", "s2", false],
    ]);
  });

  it("with a stack that fails to load, logs the error once and one short line per session", async () => {
    const { lines, counts, media } = rig({
      stack: () => {
        throw new Error("libskia.so: cannot open shared object file");
      },
    });
    expect(lines).toEqual([]);
    for (const id of ["s1", "s2", "s3"]) {
      expect((await (await media(id)).whep(offer)).status).toBe(WhepStatus.UNAVAILABLE);
    }
    expect(counts.loads).toBe(1);
    const errors = lines.filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.err).toMatchObject({ message: "libskia.so: cannot open shared object file" });
    expect(lines.filter((l) => l.level === "warn").map((l) => l.sessionId)).toEqual(["s1", "s2", "s3"]);
    expect(lines.filter((l) => l.level === "warn").every((l) => !("err" in l))).toBe(true);
  });

  it("loads a stack that works once, for every session after", async () => {
    const made: string[] = [];
    class FakeAvatarMedia {
      constructor(ctx: SessionMediaContext) {
        made.push(ctx.session.id);
      }
      publishIfRoom() {}
    }
    const { lines, counts, media } = rig({ stack: () => ({ AvatarMedia: FakeAvatarMedia }) });
    await Promise.all(["s1", "s2"].map(media));
    await media("s3");
    expect(counts.loads).toBe(1);
    expect(made).toEqual(["s1", "s2", "s3"]);
    expect(lines).toEqual([]);
  });

  it("with media off, neither looks the packages up nor loads", async () => {
    const { lines, counts, media } = rig({ mediaOn: false });
    expect((await (await media("s1")).whep(offer)).message).toMatch(/PIPELINE_MEDIA/);
    expect(counts).toEqual({ lookups: 0, loads: 0 });
    expect(lines).toEqual([]);
  });
});

describe("unresolvedMediaPackages", () => {
  it("finds every package of the stack from the media package, without loading them", () => {
    expect(unresolvedMediaPackages()).toEqual([]);
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.filter((file) => /napi-rs|node-datachannel|opusscript/.test(file))).toEqual([]);
  });

  it("names the packages a lookup does not find", () => {
    const resolve = (name: string) => {
      if (name === "opusscript" || name === "@napi-rs/canvas")
        throw new Error(`Cannot find package '${name}'`);
      return `file:///x/${name}`;
    };
    expect(unresolvedMediaPackages(resolve)).toEqual(["@napi-rs/canvas", "opusscript"]);
    expect(MEDIA_NATIVE_PACKAGES).toContain("node-datachannel");
  });
});
