import { ProviderError } from "../../src/types.js";

/** Everything an audio stream yields, and the error that ended it, if any. */
export async function collect(
  stream: AsyncIterable<Uint8Array>,
): Promise<{ chunks: Uint8Array[]; error?: ProviderError }> {
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    return { chunks, error: err };
  }
  return { chunks };
}

export function concat(chunks: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(chunks));
}
