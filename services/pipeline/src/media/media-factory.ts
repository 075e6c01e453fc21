import type { CatalogService } from "@avatar/contracts/catalog";
import { readRtcSettings } from "@avatar/media";
import type { Client } from "@connectrpc/connect";
import { AvatarMedia } from "./avatar-media.js";
import { LookSource } from "./look-source.js";
import { noMedia } from "./no-media.js";
import type { SessionMediaFactory } from "./session-media.js";

/**
 * The sessions' media on this worker: the avatar rendered from its look (read from the catalog) and
 * served to WHEP viewers, unless PIPELINE_MEDIA is off. The WebRTC settings (WEBRTC_*) and FFMPEG_PATH
 * come from the environment; a bad value stops the worker at start rather than at the first viewer.
 */
export function avatarMediaFactory(deps: {
  catalog: Pick<Client<typeof CatalogService>, "getAvatarLook">;
  env: Record<string, string | undefined>;
  mediaOn: boolean;
}): SessionMediaFactory {
  if (!deps.mediaOn) return noMedia;
  const rtc = readRtcSettings(deps.env);
  const looks = new LookSource(deps.catalog);
  return async (ctx) => new AvatarMedia(ctx, { looks, rtc });
}
