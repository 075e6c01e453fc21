/**
 * The embed page's script (browser JavaScript, no dependencies). On Start: mints the visitor's session,
 * starts it, opens the event socket and watches the avatar over WHEP (a recvonly RTCPeerConnection whose
 * offer is POSTed to /v1/sessions/{id}/whep with the session token). Captions follow the avatar's words
 * as they come; the visitor speaks (microphone as `user.audio`) or types (`avatar.say`). Every failure
 * a visitor can meet is told in plain words: the gateway's `visitor_message` when its error envelope has
 * one, else the page's own text for the status; server messages meant for developers are never shown.
 *
 * `window.avatarEmbed` exposes the page's state, peer connection and video element (read-only) for
 * pages that host the embed and for tests.
 */
export const EMBED_PAGE_SCRIPT = `
"use strict";
const config = JSON.parse(document.getElementById("embed-config").textContent);
const $ = (id) => document.getElementById(id);
const video = $("video");
const KEEP_ALIVE_MS = 60000;
const WATCH_RETRIES = 5;

let state = "idle";
let token = null, sessionId = null, socket = null, keepAlive = null, mic = null;
let peer = null, viewerUrl = null, watchAttempts = 0, watchTimer = null;
let caption = "", captionTimer = null;

window.avatarEmbed = Object.freeze({
  get state() { return state; },
  get peer() { return peer; },
  get sessionId() { return sessionId; },
  video,
});

const STATUS = {
  idle: "Ready", connecting: "Connecting…", live: "Listening", speaking: "Speaking",
  ended: "Ended", error: "Unavailable",
};

function setState(next) {
  state = next;
  const chip = $("chip");
  chip.dataset.state = next;
  chip.textContent = STATUS[next] || next;
  const live = next === "live" || next === "speaking";
  for (const id of ["text", "send", "mic", "end", "mute"]) $(id).disabled = !live;
  $("start-overlay").hidden = next !== "idle" && next !== "ended" && next !== "error";
}

function announce(text) {
  $("status").textContent = text;
}

function showOverlay(message, buttonLabel) {
  $("overlay-message").textContent = message;
  $("start").textContent = buttonLabel;
  $("start").disabled = false;
}

function line(kind, text) {
  const log = $("log");
  log.querySelector(".empty")?.remove();
  const p = document.createElement("p");
  p.className = kind;
  p.textContent = text;
  log.appendChild(p);
  log.scrollTop = log.scrollHeight;
  return p;
}

/** What a visitor is told when a failed call's answer has no visitor_message. */
function friendly(status) {
  if (status === 0) return "We couldn't reach the avatar. Check your connection and try again.";
  if (status === 429) return "Lots of people are talking to this avatar right now. Please try again in a moment.";
  if (status === 400 || status === 402 || status === 403) return "This avatar isn't available right now.";
  if (status === 404 || status === 409) return "This conversation is no longer available.";
  if (status === 503) return "The avatar is busy right now. Please try again shortly.";
  return "Something went wrong on our side. Please try again.";
}

class CallError extends Error {
  constructor(status, text) { super(text || friendly(status)); this.status = status; }
}

/**
 * The gateway's words for the visitor, from its error envelope ({ code, data, message, reason,
 * visitor_message }), or null. Only visitor_message: other endpoints' messages are for developers.
 */
async function visitorMessage(res) {
  try {
    const text = (await res.json()).visitor_message;
    return typeof text === "string" ? text : null;
  } catch {
    return null;
  }
}

async function call(method, path, options = {}) {
  const headers = {};
  if (options.bearer) headers.Authorization = "Bearer " + options.bearer;
  if (options.contentType) headers["Content-Type"] = options.contentType;
  let res;
  try {
    res = await fetch(path, { method, headers, body: options.body, credentials: "same-origin" });
  } catch {
    throw new CallError(0);
  }
  if (!res.ok) throw new CallError(res.status, await visitorMessage(res));
  return res;
}

const json = async (res) => (await res.json()).data;

async function start() {
  $("start").disabled = true;
  setState("connecting");
  announce("Connecting to the avatar");
  $("captions").textContent = "";
  try {
    const minted = await json(await call("POST", "/embed/" + config.embedId + "/session"));
    token = minted.session_token;
    sessionId = minted.session_id;
    const started = await json(await call("POST", "/v1/sessions/start", { bearer: token }));
    openSocket(started.ws_url);
    watchAttempts = 0;
    watch();
  } catch (err) {
    fail(err instanceof CallError ? err.message : friendly(-1));
  }
}

function openSocket(url) {
  socket = new WebSocket(url);
  socket.onmessage = (m) => onEvent(JSON.parse(m.data));
  socket.onopen = () => {
    setState("live");
    announce("Connected. The avatar is listening.");
    line("notice", "Connected. Say hello, or type a message.");
    keepAlive = setInterval(() => send({ type: "session.keep_alive" }), KEEP_ALIVE_MS);
    $("text").focus();
  };
  socket.onclose = () => {
    if (state === "live" || state === "speaking") finish("The connection to the avatar was lost.");
  };
}

/** WHEP: a recvonly offer with every candidate, the worker's answer, then the avatar's stream. */
async function watch() {
  clearTimeout(watchTimer);
  closePeer();
  const pc = new RTCPeerConnection();
  peer = pc;
  pc.addTransceiver("video", { direction: "recvonly" });
  pc.addTransceiver("audio", { direction: "recvonly" });
  pc.ontrack = (e) => {
    if (!video.srcObject) video.srcObject = new MediaStream();
    video.srcObject.addTrack(e.track);
    video.play().catch(() => {});
  };
  pc.onconnectionstatechange = () => {
    if (pc !== peer) return;
    if (pc.connectionState === "connected") watchAttempts = 0;
    // The session's worker changed or the network dropped: ask for the stream again.
    if (pc.connectionState === "failed") rewatch();
  };
  try {
    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    const res = await call("POST", "/v1/sessions/" + sessionId + "/whep", {
      bearer: token, contentType: "application/sdp", body: pc.localDescription.sdp,
    });
    viewerUrl = res.headers.get("Location");
    if (pc !== peer) return;
    await pc.setRemoteDescription({ type: "answer", sdp: await res.text() });
  } catch (err) {
    if (pc !== peer) return;
    console.warn("avatar video:", err);
    rewatch();
  }
}

function rewatch() {
  if (state !== "live" && state !== "speaking") return;
  if (++watchAttempts > WATCH_RETRIES) {
    line("notice", "The video isn't available right now; you can keep talking.");
    return;
  }
  watchTimer = setTimeout(watch, Math.min(8000, 500 * 2 ** watchAttempts));
}

function gathered(pc) {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { if (pc.iceGatheringState === "complete") resolve(); };
    pc.addEventListener("icegatheringstatechange", done);
    setTimeout(resolve, 2000);
  });
}

function closePeer() {
  if (viewerUrl && token) call("DELETE", viewerUrl, { bearer: token }).catch(() => {});
  viewerUrl = null;
  if (peer) peer.close();
  peer = null;
}

function onEvent(e) {
  switch (e.type) {
    case "avatar.speak_started":
      setState("speaking");
      announce("The avatar is speaking");
      break;
    case "avatar.speak_ended":
      if (state === "speaking") setState("live");
      clearTimeout(captionTimer);
      captionTimer = setTimeout(() => { caption = ""; $("captions").textContent = ""; }, 1500);
      break;
    case "avatar.transcription.chunk":
      clearTimeout(captionTimer);
      caption += e.text;
      $("captions").textContent = caption.trim();
      break;
    case "avatar.transcription":
      caption = "";
      if (e.text) line("avatar", e.text);
      break;
    case "user.transcription":
      if (e.text) line("user", e.text);
      break;
    case "error":
      line("notice", "The avatar couldn't answer that. Please try again.");
      console.warn("avatar error:", e.error);
      break;
    case "warning":
      console.info("avatar warning:", e.warning);
      break;
    case "session.stopped":
      finish(endMessage(e.end_reason));
      break;
  }
}

function endMessage(reason) {
  switch (reason) {
    case "USER_CLOSED": return "You ended the conversation.";
    case "MAX_DURATION_REACHED": return "The conversation reached its time limit.";
    case "IDLE_TIMEOUT": return "The conversation ended after a quiet while.";
    case "NO_CREDITS": case "AVATAR_DELETED": return "This avatar isn't available any more.";
    case "AGENT_HANG_UP": return "The avatar ended the conversation.";
    default: return "The conversation has ended.";
  }
}

function send(event) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(event));
}

async function toggleMic() {
  if (mic) {
    mic.stop();
    mic = null;
    $("mic").setAttribute("aria-pressed", "false");
    $("mic").textContent = "Use microphone";
    return;
  }
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true } });
  } catch {
    line("notice", "The microphone isn't available. You can type instead.");
    return;
  }
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
  $("mic").setAttribute("aria-pressed", "true");
  $("mic").textContent = "Stop microphone";
  announce("Microphone on");
}

function toggleMute() {
  video.muted = !video.muted;
  $("mute").setAttribute("aria-pressed", String(video.muted));
  $("mute").textContent = video.muted ? "Unmute" : "Mute";
  announce(video.muted ? "Sound off" : "Sound on");
}

async function end() {
  $("end").disabled = true;
  if (token) await call("POST", "/v1/sessions/stop", { bearer: token }).catch(() => {});
  finish(endMessage("USER_CLOSED"));
}

function finish(message) {
  if (state === "ended") return;
  clearInterval(keepAlive);
  clearTimeout(watchTimer);
  if (mic) { mic.stop(); mic = null; }
  if (socket) { socket.onclose = null; socket.close(); socket = null; }
  closePeer();
  video.srcObject = null;
  setState("ended");
  $("captions").textContent = "";
  line("notice", message);
  announce(message);
  showOverlay(message, "Start again");
}

function fail(message) {
  clearInterval(keepAlive);
  closePeer();
  setState("error");
  announce(message);
  showOverlay(message, "Try again");
}

$("start").onclick = start;
$("mic").onclick = toggleMic;
$("mute").onclick = toggleMute;
$("end").onclick = end;
$("say").onsubmit = (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  line("user", text);
  send({ type: "avatar.say", text });
  $("text").value = "";
};
setState("idle");
`;
