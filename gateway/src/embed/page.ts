import { EMBED_PAGE_SCRIPT } from "./page-script.js";
import { EMBED_PAGE_STYLE } from "./page-style.js";

/**
 * The embed's web page: a self-contained HTML document (its own script and style, no external
 * resources). Before start it shows the avatar's poster and a Start button (browsers let a page play
 * sound only after a gesture); then the avatar's video and voice over WHEP, captions as the avatar
 * speaks, the conversation, and mute, microphone and end controls.
 */
export interface EmbedPageOptions {
  embedId: string;
  vertical: boolean;
}

export function embedPage(options: EmbedPageOptions): string {
  // JSON in a script element: "<" is escaped so no value can close the element.
  const config = JSON.stringify({ embedId: options.embedId }).replaceAll("<", "\\u003c");
  const poster = `/embed/${encodeURIComponent(options.embedId)}/poster.png`;
  const orientation = options.vertical ? "vertical" : "horizontal";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<title>Talk with the avatar</title>
<style>${EMBED_PAGE_STYLE}
:root { --ratio: ${options.vertical ? "9 / 16" : "16 / 9"}; }</style>
</head>
<body>
<main class="app ${orientation}">
  <section class="stage" aria-label="The avatar" style="background-image: url('${poster}')">
    <video id="video" playsinline poster="${poster}" aria-label="The avatar's video"></video>
    <div id="chip" class="chip" data-state="idle" aria-hidden="true">Ready</div>
    <div id="captions" class="captions" aria-hidden="true"></div>
    <div id="start-overlay" class="overlay">
      <p id="overlay-message">Talk with the avatar: it answers with its voice.</p>
      <button id="start" class="primary" type="button">Start conversation</button>
    </div>
  </section>
  <section class="panel" aria-label="Conversation">
    <div id="log" class="log" role="log" aria-live="polite" aria-label="Conversation so far"><p class="empty">Your conversation will appear here.</p></div>
    <form id="say">
      <label class="visually-hidden" for="text">Message to the avatar</label>
      <input id="text" type="text" placeholder="Type a message" autocomplete="off" maxlength="2000" disabled>
      <button id="send" type="submit" disabled>Send</button>
    </form>
    <div class="controls">
      <button id="mute" type="button" aria-pressed="false" disabled>Mute</button>
      <button id="mic" type="button" aria-pressed="false" disabled>Use microphone</button>
      <button id="end" class="danger" type="button" disabled>End</button>
    </div>
    <div id="status" class="visually-hidden" role="status" aria-live="polite"></div>
  </section>
</main>
<script id="embed-config" type="application/json">${config}</script>
<script>${EMBED_PAGE_SCRIPT}</script>
</body>
</html>
`;
}
