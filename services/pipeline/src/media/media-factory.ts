import type { CatalogService } from "@avatar/contracts/catalog";
import { readRtcSettings } from "@avatar/media/rtc-settings";
import type { Client } from "@connectrpc/connect";
import { LookSource } from "./look-source.js";
import { noMedia } from "./no-media.js";
import type { SessionMediaFactory } from "./session-media.js";
import type { TransportAPublishing } from "./transport-a.js";

/**
 * The sessions' media on this worker: the avatar rendered from its look (read from the catalog), served
 * to WHEP viewers and published into transportA rooms, unless PIPELINE_MEDIA is off. The WebRTC settings (WEBRTC_*) and FFMPEG_PATH
 * come from the environment; a bad value stops the worker at start rather than at the first viewer.
 * The media stack (its native libraries: Skia, libdatachannel, Opus) is loaded with the first session's
 * media, so that a worker that has served none stays small.
 */
export function avatarMediaFactory(deps: {
  catalog: Pick<Client<typeof CatalogService>, "getAvatarLook">;
  env: Record<string, string | undefined>;
  mediaOn: boolean;
  transportA?: TransportAPublishing;
}): SessionMediaFactory {
  if (!deps.mediaOn) return noMedia;
  const rtc = readRtcSettings(deps.env);
  const looks = new LookSource(deps.catalog);
  const transportA = deps.transportA;
  let stack: Promise<typeof import("./avatar-media.js")> | undefined;
  return async (ctx) => {
    stack ??= import("./avatar-media.js");
    const { AvatarMedia } = await stack;
    const media = new AvatarMedia(ctx, { looks, rtc, ...(transportA ? { transportA } : {}) });
    media.publishIfRoom();
    return media;
  };
}
