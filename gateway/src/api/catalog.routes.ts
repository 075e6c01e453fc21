import { route } from "../http/route.js";
import { LIMIT_DEFAULT } from "../limits.js";
import * as catalog from "./catalog.js";

/** Languages, LLM models, avatars and voices. */
export const catalogRoutes = [
  route({
    method: "GET",
    path: "/v1/languages",
    summary: "List supported languages",
    auth: "none",
    rateLimit: LIMIT_DEFAULT,
    handle: catalog.listLanguages,
  }),
  route({
    method: "GET",
    path: "/v1/llm-models",
    summary: "List managed language models per provider",
    auth: "none",
    rateLimit: LIMIT_DEFAULT,
    handle: catalog.listLlmModels,
  }),
  route({
    method: "GET",
    path: "/v1/avatars",
    summary: "List the space's avatars",
    auth: "api_key",
    rateLimit: LIMIT_DEFAULT,
    query: catalog.avatarListQuery,
    handle: catalog.listAvatars,
  }),
  route({
    method: "GET",
    path: "/v1/avatars/public",
    summary: "List public avatars",
    auth: "none",
    rateLimit: LIMIT_DEFAULT,
    query: catalog.avatarListQuery,
    handle: catalog.listPublicAvatars,
  }),
  route({
    method: "GET",
    path: "/v1/avatars/{avatar_id}",
    summary: "Get an avatar",
    auth: "api_key",
    rateLimit: LIMIT_DEFAULT,
    params: catalog.avatarPath,
    handle: catalog.getAvatar,
  }),
  route({
    method: "GET",
    path: "/v1/voices",
    summary: "List voices",
    auth: "api_key",
    rateLimit: LIMIT_DEFAULT,
    query: catalog.voiceListQuery,
    handle: catalog.listVoices,
  }),
  route({
    method: "GET",
    path: "/v1/voices/{voice_id}",
    summary: "Get a voice with its voice engines",
    auth: "api_key",
    rateLimit: LIMIT_DEFAULT,
    params: catalog.voicePath,
    handle: catalog.getVoice,
  }),
];
