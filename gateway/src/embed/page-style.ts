/**
 * The embed page's stylesheet. One column on a phone held upright (the video, then the conversation),
 * side by side when the screen is wider than tall; the video keeps the embed's aspect ratio and never
 * squeezes the conversation below a usable height.
 */
export const EMBED_PAGE_STYLE = `
:root {
  color-scheme: dark;
  --bg: #0f1115; --panel: #171a21; --line: #2a2f3a; --text: #eef1f6; --muted: #9aa3b2;
  --accent: #4f8cff; --accent-text: #fff; --danger: #ff6b6b; --ok: #3ecf8e;
  --radius: 14px; --ratio: 16 / 9;
}
* { box-sizing: border-box; }
html, body { height: 100%; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
.app { height: 100%; display: grid; gap: 12px; padding: 12px; grid-template-columns: 1fr; grid-template-rows: auto minmax(200px, 1fr); }
.stage { position: relative; width: 100%; max-height: 70vh; aspect-ratio: var(--ratio); margin: 0 auto; border-radius: var(--radius); overflow: hidden; background: #000 center / cover no-repeat; box-shadow: 0 8px 30px rgb(0 0 0 / .35); }
.vertical .stage { max-height: 62vh; max-width: calc(62vh * 9 / 16); }
@media (orientation: landscape) and (min-width: 600px) {
  .app { grid-template-columns: minmax(0, 3fr) minmax(280px, 2fr); grid-template-rows: minmax(0, 1fr); }
  .stage { max-height: calc(100vh - 24px); align-self: center; }
  .vertical .stage { max-height: calc(100vh - 24px); max-width: calc((100vh - 24px) * 9 / 16); }
  .vertical.app { grid-template-columns: auto minmax(280px, 1fr); }
}
video { width: 100%; height: 100%; object-fit: cover; display: block; background: transparent; }
.overlay { position: absolute; inset: 0; display: flex; flex-direction: column; align-items: center; justify-content: flex-end; gap: 10px; padding: 16px 16px 18px; text-align: center; background: linear-gradient(to top, rgb(0 0 0 / .55), rgb(0 0 0 / .1)); }
.overlay[hidden] { display: none; }
.overlay p { margin: 0; max-width: 32ch; text-shadow: 0 1px 2px rgb(0 0 0 / .6); }
.chip { position: absolute; top: 10px; left: 10px; padding: 4px 10px; border-radius: 999px; background: rgb(0 0 0 / .55); font-size: 13px; display: flex; align-items: center; gap: 6px; }
.chip::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--muted); }
.chip[data-state="live"]::before, .chip[data-state="speaking"]::before { background: var(--ok); }
.chip[data-state="speaking"]::before { box-shadow: 0 0 0 4px rgb(62 207 142 / .25); }
.chip[data-state="error"]::before { background: var(--danger); }
.captions { position: absolute; left: 50%; bottom: 12px; transform: translateX(-50%); width: min(92%, 60ch); padding: 6px 12px; border-radius: 8px; background: rgb(0 0 0 / .65); font-size: 16px; text-align: center; }
.captions:empty { display: none; }
.panel { display: flex; flex-direction: column; gap: 10px; min-height: 0; background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: 12px; }
.log { flex: 1; min-height: 96px; overflow-y: auto; display: flex; flex-direction: column; gap: 8px; padding-right: 4px; }
.log p { margin: 0; padding: 8px 10px; border-radius: 10px; max-width: 90%; }
.log .avatar { background: #202634; align-self: flex-start; }
.log .user { background: #24324f; align-self: flex-end; }
.log .notice { color: var(--muted); font-size: 13px; align-self: center; text-align: center; }
.log .empty { color: var(--muted); align-self: center; margin: auto; }
form { display: flex; gap: 8px; }
label.visually-hidden, .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
input[type="text"] { flex: 1; min-width: 0; font: inherit; padding: 10px 12px; border-radius: 10px; border: 1px solid var(--line); background: #0f1218; color: inherit; }
.controls { display: flex; gap: 8px; flex-wrap: wrap; }
button { font: inherit; padding: 10px 14px; border-radius: 10px; border: 1px solid var(--line); background: #222836; color: inherit; cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-text); font-weight: 600; padding: 12px 22px; font-size: 16px; }
button.danger { border-color: #5a2a2a; background: #3a1f24; }
button[aria-pressed="true"] { background: #2d3a55; border-color: var(--accent); }
button:disabled, input:disabled { opacity: .45; cursor: not-allowed; }
button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
`;
