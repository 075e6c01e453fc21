/**
 * A local OpenAI-compatible chat-completions server (node:http): a real protocol peer for the
 * language-model summary path. It checks what a client must send (path, method, bearer key, JSON body
 * with model and messages) and answers as the protocol does; every request is kept for assertions.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatRequest {
  path: string;
  authorization: string | undefined;
  body: {
    model?: unknown;
    stream?: unknown;
    messages?: { role: string; content: string }[];
  };
}

export interface ChatServer {
  /** The base_url of an LLM configuration pointing here (`…/v1`). */
  baseUrl: string;
  requests: ChatRequest[];
  /** What the next answers say (the summary text), or how they fail. */
  behaviour: { kind: "answer"; text: string } | { kind: "status"; status: number } | { kind: "hang" };
  close(): Promise<void>;
}

export async function startChatServer(expected: { apiKey: string; model: string }): Promise<ChatServer> {
  const hanging = new Set<http.ServerResponse>();
  const state: Pick<ChatServer, "requests" | "behaviour"> = {
    requests: [],
    behaviour: { kind: "answer", text: "The user is planning a trip." },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: ChatRequest["body"] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return error(res, 400, "invalid_request_error", "body is not JSON");
      }
      state.requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body });
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        return error(res, 404, "invalid_request_error", "unknown route");
      }
      if (req.headers.authorization !== `Bearer ${expected.apiKey}`) {
        return error(res, 401, "invalid_api_key", "Incorrect API key provided");
      }
      if (body.model !== expected.model) return error(res, 404, "model_not_found", "unknown model");
      const messages = body.messages;
      if (
        !Array.isArray(messages) ||
        messages.length === 0 ||
        messages.some((m) => typeof m?.content !== "string")
      ) {
        return error(res, 400, "invalid_request_error", "messages must be a non-empty array");
      }
      const behaviour = state.behaviour;
      if (behaviour.kind === "hang") {
        hanging.add(res);
        return;
      }
      if (behaviour.kind === "status")
        return error(res, behaviour.status, "server_error", "failure on purpose");
      const answer = {
        id: `chatcmpl-${state.requests.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          { index: 0, message: { role: "assistant", content: behaviour.text }, finish_reason: "stop" },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    get behaviour() {
      return state.behaviour;
    },
    set behaviour(b) {
      state.behaviour = b;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function error(res: http.ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type, code: type } }));
}
