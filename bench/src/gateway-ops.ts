import type { KeyPool } from "./key-pool.js";
import { OperationFailed } from "./load.js";

/** The operations measured through the public gateway, over HTTP. */

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

async function expectStatus(res: Response, status: number, what: string): Promise<unknown> {
  const payload = (await res.json().catch(() => null)) as { data?: unknown } | null;
  if (res.status !== status) throw new OperationFailed(`${what} ${res.status}`);
  return payload?.data;
}

export async function mint(gatewayUrl: string, keys: KeyPool, body: unknown): Promise<string> {
  const res = await post(`${gatewayUrl}/v1/sessions/token`, { "X-API-KEY": await keys.take() }, body);
  const data = (await expectStatus(res, 200, "token")) as { session_token: string };
  return data.session_token;
}

export async function mintStartStop(gatewayUrl: string, keys: KeyPool, body: unknown): Promise<void> {
  const token = await mint(gatewayUrl, keys, body);
  const bearer = { Authorization: `Bearer ${token}` };
  await expectStatus(await post(`${gatewayUrl}/v1/sessions/start`, bearer, {}), 201, "start");
  await expectStatus(await post(`${gatewayUrl}/v1/sessions/stop`, bearer, {}), 200, "stop");
}
