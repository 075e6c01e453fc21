import { type Listening, listen } from "../server.js";
import { METRICS_CONTENT_TYPE, metricsText } from "./registry.js";

export const METRICS_PATH = "/metrics";

interface PlainResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

/** Answers a scrape with every metric of the process. */
export function respondMetrics(res: PlainResponse): void {
  metricsText().then(
    (text) => {
      res.writeHead(200, { "content-type": METRICS_CONTENT_TYPE });
      res.end(text);
    },
    (err: unknown) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`);
    },
  );
}

/**
 * The metrics listener of a process (METRICS_PORT): `GET /metrics` and nothing else, on its own port so
 * that the public gateway never exposes it.
 */
export async function serveMetrics(options: { port: number; host: string }): Promise<Listening> {
  const listening = await listen(options);
  listening.setHandler((req, res) => {
    if (req.method === "GET" && req.url?.split("?")[0] === METRICS_PATH) return respondMetrics(res);
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  return listening;
}
