import { route } from "../http/route.js";
import { mintSessionToken, tokenRequestBody } from "./session-token.js";

/** POST /v1/sessions/token. */
export const sessionTokenRoutes = [
  route({
    method: "POST",
    path: "/v1/sessions/token",
    summary: "Mint a session token (FULL or LITE body)",
    auth: "api_key",
    rateLimit: "default",
    body: tokenRequestBody,
    handle: mintSessionToken,
  }),
];
