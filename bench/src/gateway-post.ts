/** A JSON POST to the public gateway as the benchmarks' clients make it: answers the envelope's `data`. */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<Record<string, string>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const payload = (await res.json().catch(() => null)) as { data?: Record<string, string> } | null;
  if (res.status >= 300) throw new Error(`${new URL(url).pathname} ${res.status}`);
  return payload?.data ?? {};
}
