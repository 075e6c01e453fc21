import { parseArgs } from "node:util";
import { runConversation } from "./conversation.js";

const usage = `pnpm session-client --key API_KEY [--url http://localhost:8080] [--mode LITE|FULL]
                      [--avatar ID] [--no-sandbox] [--text "what the FULL avatar says"]
                      [--say]   (FULL: the text goes to the avatar's language model, which answers it)
                      [--record FILE.mkv|FILE.webm]   (what a WHEP viewer receives, playable with ffplay/VLC)`;

const { values } = parseArgs({
  options: {
    key: { type: "string", default: process.env.AVATAR_API_KEY },
    url: { type: "string", default: "http://localhost:8080" },
    mode: { type: "string", default: "LITE" },
    avatar: { type: "string" },
    "no-sandbox": { type: "boolean", default: false },
    text: { type: "string", default: "Hello! I am speaking with a voice synthesized on this machine." },
    record: { type: "string" },
    say: { type: "boolean", default: false },
  },
});
const mode = values.mode?.toUpperCase();
if (!values.key || (mode !== "LITE" && mode !== "FULL")) {
  process.stderr.write(`${usage}\n(the key may also come from AVATAR_API_KEY)\n`);
  process.exit(2);
}
try {
  const report = await runConversation({
    baseUrl: values.url ?? "http://localhost:8080",
    apiKey: values.key,
    mode,
    avatarId: values.avatar,
    sandbox: !values["no-sandbox"],
    text: values.text ?? "",
    say: values.say ?? false,
    ...(values.record ? { record: values.record } : {}),
    print: (line) => process.stdout.write(`${line}\n`),
  });
  const audio = report.audioMs === undefined ? "" : ` for ${report.audioMs} ms of audio`;
  process.stdout.write(`spoken: speak_started -> speak_ended ${report.playedMs} ms${audio}\n`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
