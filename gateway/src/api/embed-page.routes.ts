import { forVisitor } from "../embed/visitor-errors.js";
import { route } from "../http/route.js";
import * as images from "./avatar-images.js";
import * as page from "./embed-page.js";

/** An embed's public web page and its visitors' sessions (no credential: counted per client IP). */
export const embedPageRoutes = [
  route({
    method: "GET",
    path: "/embed/{embed_id}",
    summary: "The embed's web page: runs a session with the embed's avatar in the browser",
    auth: "none",
    rateLimit: "default",
    params: page.embedPagePath,
    handle: page.showEmbedPage,
  }),
  route({
    method: "GET",
    path: "/embed/{embed_id}/poster.png",
    summary: "The embed's poster: its avatar at rest, in the embed's orientation (PNG)",
    auth: "none",
    rateLimit: "default",
    params: page.embedPagePath,
    handle: images.showEmbedPoster,
  }),
  route({
    method: "POST",
    path: "/embed/{embed_id}/session",
    summary: "Mint a session token for a visitor of the embed's page (source EMBED)",
    auth: "none",
    rateLimit: "default",
    cors: page.embedCorsOrigins,
    errors: forVisitor,
    optionalBody: true,
    params: page.embedPagePath,
    body: page.embedSessionBody,
    handle: page.mintEmbedSession,
  }),
];
