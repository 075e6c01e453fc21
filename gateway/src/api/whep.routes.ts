import { route } from "../http/route.js";
import { LIMIT_DEFAULT } from "../limits.js";
import * as whep from "./whep.js";

/** WHEP viewers of a session's avatar stream (contract section 7). */
export const whepRoutes = [
  route({
    method: "POST",
    path: "/v1/sessions/{session_id}/whep",
    summary: "Watch the session's avatar: a recvonly SDP offer in, the SDP answer out (WHEP)",
    auth: "api_key_or_cookie",
    rateLimit: LIMIT_DEFAULT,
    cors: true,
    status: 201,
    params: whep.whepPath,
    textBody: whep.SDP,
    handle: whep.offerViewer,
  }),
  route({
    method: "DELETE",
    path: "/v1/sessions/{session_id}/whep/{viewer_id}",
    summary: "Stop watching: ends the WHEP viewer at this Location",
    auth: "api_key_or_cookie",
    rateLimit: LIMIT_DEFAULT,
    cors: true,
    status: 204,
    params: whep.viewerPath,
    handle: whep.deleteViewer,
  }),
];
