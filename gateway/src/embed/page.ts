/**
 * The embed's web page: a self-contained HTML document (no external resources) that, on a click, mints
 * the embed's session, starts it and talks to the avatar over the event socket: the visitor's microphone
 * as `user.audio` (24 kHz PCM), typed text as `avatar.say`, the conversation shown as it is transcribed.
 */
export interface EmbedPageOptions {
  embedId: string;
  vertical: boolean;
}

/** Content-Security-Policy of the page: its own inline code only, sockets and calls to this origin. */
export const EMBED_PAGE_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:; " +
  "base-uri 'none'; form-action 'none'";

export function embedPage(options: EmbedPageOptions): string {
  // JSON in a script element: "<" is escaped so no value can close the element.
  const config = JSON.stringify({ embedId: options.embedId }).replaceAll("<", "\\u003c");
  const ratio = options.vertical ? "9 / 16" : "16 / 9";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Avatar</title>
<style>
  body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: #111; color: #eee; }
  main { display: flex; flex-direction: column; gap: 8px; padding: 12px; box-sizing: border-box; aspect-ratio: ${ratio}; max-height: 100vh; }
  #stage { flex: 1; display: flex; align-items: center; justify-content: center; border-radius: 8px; background: #222; min-height: 80px; }
  #stage[data-state="talking"] { background: #234; }
  #log { flex: 2; overflow-y: auto; background: #1a1a1a; border-radius: 8px; padding: 8px; }
  .avatar { color: #9cf; } .user { color: #cf9; } .notice { color: #fc6; }
  form { display: flex; gap: 6px; } input { flex: 1; }
  button, input { font: inherit; padding: 6px 10px; border-radius: 6px; border: 1px solid #444; background: #2a2a2a; color: inherit; }
</style>
</head>
<body>
<main>
  <div id="stage" data-state="idle">Press Start to talk with the avatar</div>
  <div id="log" aria-live="polite"></div>
  <form id="say"><input id="text" placeholder="Type a message" autocomplete="off" disabled><button id="send" disabled>Send</button></form>
  <div><button id="start">Start</button> <button id="mic" disabled>Microphone on</button> <button id="end" disabled>End</button></div>
</main>
<script id="embed-config" type="application/json">${config}</script>
<script>
"use strict";
const config = JSON.parse(document.getElementById("embed-config").textContent);
const $ = (id) => document.getElementById(id);
let token = null, socket = null, keepAlive = null, mic = null;

function line(kind, text) {
  const p = document.createElement("p");
  p.className = kind;
  p.textContent = text;
  $("log").appendChild(p);
  $("log").scrollTop = $("log").scrollHeight;
}

async function call(method, path, bearer) {
  const res = await fetch(path, { method, headers: bearer ? { Authorization: "Bearer " + bearer } : {} });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || "HTTP " + res.status);
  return body.data;
}

function onEvent(e) {
  switch (e.type) {
    case "avatar.speak_started": $("stage").dataset.state = "talking"; $("stage").textContent = "Speaking"; break;
    case "avatar.speak_ended": $("stage").dataset.state = "idle"; $("stage").textContent = "Listening"; break;
    case "avatar.transcription": line("avatar", "Avatar: " + e.text); break;
    case "user.transcription": line("user", "You: " + e.text); break;
    case "error": line("notice", "Error: " + e.error.message); break;
    case "warning": line("notice", "Note: " + e.warning.message); break;
    case "session.stopped": line("notice", "The conversation has ended (" + e.end_reason + ")."); finish(); break;
  }
}

async function start() {
  $("start").disabled = true;
  try {
    const minted = await call("POST", "/embed/" + config.embedId + "/session");
    token = minted.session_token;
    const started = await call("POST", "/v1/sessions/start", token);
    socket = new WebSocket(started.ws_url);
    socket.onmessage = (m) => onEvent(JSON.parse(m.data));
    socket.onclose = () => finish();
    socket.onopen = () => {
      $("stage").textContent = "Listening";
      for (const id of ["text", "send", "mic", "end"]) $(id).disabled = false;
      keepAlive = setInterval(() => send({ type: "session.keep_alive" }), 60000);
    };
  } catch (err) {
    line("notice", "Could not start: " + err.message);
    $("start").disabled = false;
  }
}

function send(event) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(event));
}

async function toggleMic() {
  if (mic) { mic.stop(); mic = null; $("mic").textContent = "Microphone on"; return; }
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true } });
  const context = new AudioContext({ sampleRate: 24000 });
  const source = context.createMediaStreamSource(stream);
  const processor = context.createScriptProcessor(4096, 1, 1);
  processor.onaudioprocess = (e) => {
    const input = e.inputBuffer.getChannelData(0);
    const pcm = new Int16Array(input.length);
    for (let i = 0; i < input.length; i++) pcm[i] = Math.max(-1, Math.min(1, input[i])) * 0x7fff;
    let binary = "";
    const bytes = new Uint8Array(pcm.buffer);
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    send({ type: "user.audio", audio: btoa(binary) });
  };
  source.connect(processor);
  processor.connect(context.destination);
  mic = { stop: () => { processor.disconnect(); source.disconnect(); stream.getTracks().forEach((t) => t.stop()); context.close(); } };
  $("mic").textContent = "Microphone off";
}

async function end() {
  $("end").disabled = true;
  if (token) await call("POST", "/v1/sessions/stop", token).catch((err) => line("notice", err.message));
}

function finish() {
  clearInterval(keepAlive);
  if (mic) { mic.stop(); mic = null; }
  for (const id of ["text", "send", "mic", "end"]) $(id).disabled = true;
  $("stage").dataset.state = "idle";
  $("stage").textContent = "Ended";
}

$("start").onclick = start;
$("mic").onclick = () => toggleMic().catch((err) => line("notice", "Microphone: " + err.message));
$("end").onclick = end;
$("say").onsubmit = (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  line("user", "You: " + text);
  send({ type: "avatar.say", text });
  $("text").value = "";
};
</script>
</body>
</html>
`;
}
