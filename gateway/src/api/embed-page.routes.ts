import { route } from "../http/route.js";
import { LIMIT_DEFAULT } from "../limits.js";
import * as images from "./avatar-images.js";
import * as page from "./embed-page.js";

/** An embed's public web page and its visitors' sessions (no credential: counted per client IP). */
export const embedPageRoutes = [
  route({
    method: "GET",
    path: "/embed/{embed_id}",
    summary: "The embed's web page: runs a session with the embed's avatar in the browser",
    auth: "none",
    rateLimit: LIMIT_DEFAULT,
    params: page.embedPagePath,
    handle: page.showEmbedPage,
  }),
  route({
    method: "GET",
    path: "/embed/{embed_id}/poster.png",
    summary: "The embed's poster: its avatar at rest, in the embed's orientation (PNG)",
    auth: "none",
    rateLimit: LIMIT_DEFAULT,
    params: page.embedPagePath,
    handle: images.showEmbedPoster,
  }),
  route({
    method: "POST",
    path: "/embed/{embed_id}/session",
    summary: "Mint a session token for a visitor of the embed's page (source EMBED)",
    auth: "none",
    rateLimit: LIMIT_DEFAULT,
    cors: true,
    optionalBody: true,
    params: page.embedPagePath,
    body: page.embedSessionBody,
    handle: page.mintEmbedSession,
  }),
];
