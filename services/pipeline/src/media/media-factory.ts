import type { CatalogService } from "@avatar/contracts/catalog";
import { unresolvedMediaPackages } from "@avatar/media/native-packages";
import { readRtcSettings } from "@avatar/media/rtc-settings";
import type { Logger } from "@avatar/runtime";
import type { Client } from "@connectrpc/connect";
import { LookSource } from "./look-source.js";
import { noMedia, withoutMedia } from "./no-media.js";
import type { SessionMediaFactory } from "./session-media.js";
import type { TransportAPublishing } from "./transport-a.js";

type MediaStack = typeof import("./avatar-media.js");

/**
 * The sessions' media on this worker: the avatar rendered from its look (read from the catalog), served
 * to WHEP viewers and published into transportA rooms, unless PIPELINE_MEDIA is off. The WebRTC settings (WEBRTC_*) and FFMPEG_PATH
 * come from the environment; a bad value stops the worker at start rather than at the first viewer.
 * The media stack (its native libraries: Skia, libdatachannel, Opus) is loaded with the first session's
 * media, so that a worker that has served none stays small; its packages are looked up at start.
 * A worker whose stack cannot load says why once, and each session it runs says in one line that it has
 * no media (its viewers are told so).
 */
export function avatarMediaFactory(deps: {
  catalog: Pick<Client<typeof CatalogService>, "getAvatarLook">;
  env: Record<string, string | undefined>;
  log: Logger;
  mediaOn: boolean;
  transportA?: TransportAPublishing;
  /** The stack's loader (tests); by default the avatar-media module. */
  loadStack?: () => Promise<MediaStack>;
  /** The media packages not found (tests); by default looked up from the media package. */
  unresolved?: () => string[];
}): SessionMediaFactory {
  if (!deps.mediaOn) return noMedia;
  const rtc = readRtcSettings(deps.env);
  const missing = (deps.unresolved ?? unresolvedMediaPackages)();
  if (missing.length > 0) {
    deps.log.error("the media stack's packages are not found: sessions on this worker run without media", {
      missing,
    });
    return withoutStack;
  }
  const looks = new LookSource(deps.catalog);
  const transportA = deps.transportA;
  const loadStack = deps.loadStack ?? (() => import("./avatar-media.js"));
  let stack: Promise<MediaStack | undefined> | undefined;
  return async (ctx) => {
    stack ??= loadStack().catch((err: unknown) => {
      deps.log.error("the media stack could not load: sessions on this worker run without media", { err });
      return undefined;
    });
    const loaded = await stack;
    if (!loaded) return withoutStack(ctx);
    const media = new loaded.AvatarMedia(ctx, { looks, rtc, ...(transportA ? { transportA } : {}) });
    media.publishIfRoom();
    return media;
  };
}

const withoutStack: SessionMediaFactory = async (ctx) => {
  ctx.log.warn("the session runs without media: this worker's media stack is unavailable");
  return withoutMedia("this worker could not load the avatar's media stack");
};
