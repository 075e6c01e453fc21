/**
 * `pnpm bench:signatures`: what a session token's signature costs on this machine, for each algorithm a
 * session token may have: signing as the tokens service does (its JWS encoding and node:crypto on its
 * own thread; one per mint) and verifying as a gateway does (verifySessionToken, jose; one per start, stop and keep-alive).
 *
 * Settings (environment): BENCH_SIGNATURES (tokens per row, default 20000).
 */
import { randomUUID } from "node:crypto";
import { cpus, loadavg } from "node:os";
import {
  env,
  readConfig,
  SESSION_TOKEN_ALGS,
  SESSION_TOKEN_AUDIENCE,
  SESSION_TOKEN_ISSUER,
  verifySessionToken,
} from "@avatar/runtime";
import { compactJws, jwsHeader, signatureAlgorithm } from "@avatar/tokens";
import { say } from "./print.js";

const settings = readConfig({ BENCH_SIGNATURES: env.int({ default: 20_000, min: 100 }) });

/** The claims of a LITE token, the size a mint signs. */
function claims(nowSeconds: number) {
  return {
    sub: randomUUID(),
    space_id: randomUUID(),
    api_key_id: randomUUID(),
    exp: nowSeconds + 1200,
    start_session_data: {
      mode: "LITE",
      avatar_id: randomUUID(),
      is_sandbox: false,
      video_settings: { quality: "high", encoding: "H264" },
      interactivity_type: "CONVERSATIONAL",
      agent_type: null,
    },
    iss: SESSION_TOKEN_ISSUER,
    aud: SESSION_TOKEN_AUDIENCE,
    iat: nowSeconds,
  };
}

const microseconds = (start: number, n: number) => (((performance.now() - start) * 1000) / n).toFixed(1);

say(
  `pnpm bench:signatures, ${new Date().toISOString()}: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(
      " ",
    )}, ${settings.BENCH_SIGNATURES} tokens a row, node ${process.versions.node}, OpenSSL ${process.versions.openssl}`,
);
say(`${"algorithm".padEnd(12)}${"µs to sign".padEnd(14)}µs to verify`);
for (const alg of SESSION_TOKEN_ALGS) {
  const algorithm = signatureAlgorithm(alg);
  const { publicKey, privateKey } = algorithm.generate();
  const kid = randomUUID();
  const keys = { keys: [{ ...publicKey.export({ format: "jwk" }), kid, alg }] };
  const header = jwsHeader(alg, kid);
  const now = new Date();
  const claimsOfEach = Array.from({ length: settings.BENCH_SIGNATURES }, () =>
    claims(Math.floor(now.getTime() / 1000)),
  );
  const sign = (input: Buffer) => algorithm.sign(input, privateKey);
  const tokens: string[] = [];
  const signing = performance.now();
  for (const c of claimsOfEach) tokens.push(compactJws(header, c, sign));
  const signed = microseconds(signing, tokens.length);
  await verifySessionToken(tokens[0] ?? "", keys, now); // jose imports the key on first use
  const verifying = performance.now();
  for (const token of tokens) await verifySessionToken(token, keys, now);
  say(`${alg.padEnd(12)}${signed.padEnd(14)}${microseconds(verifying, tokens.length)}`);
}
