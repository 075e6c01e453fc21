import type {
  MintSessionTokenRequest,
  MintSessionTokenResponse,
  TokensService,
} from "@avatar/contracts/tokens";
import { batchedCall, onBehalfOf } from "@avatar/runtime";
import type { Client } from "@connectrpc/connect";

type TokensClient = Pick<Client<typeof TokensService>, "mintSessionToken" | "mintSessionTokensBatch">;

/** Mints a session token for a request, under that request's id. */
export type MintToken = (
  mint: MintSessionTokenRequest,
  requestId: string,
) => Promise<MintSessionTokenResponse>;

interface Mint {
  mint: MintSessionTokenRequest;
  requestId: string;
}

/** Spaces with a batch of their own kept at once; past it they are made again as mints come. */
const MAX_SPACES = 10_000;

/**
 * POST /v1/sessions/token's calls to the tokens service: the mints a space asks for in one turn of the
 * event loop go in one MintSessionTokensBatch call, each with its request id (runtime batched-call.ts).
 * Under load that is one call for several requests, where each call costs both sides their HTTP and
 * Connect handling; alone, a mint waits only for the end of its turn. A batch answers when its slowest
 * mint is done, so batches are per space: one customer's slow mints (a FULL mint waiting on a slow memory
 * or agents lookup) never hold back another's. Each mint fails on its own, with the error
 * MintSessionToken would have given, so the public answers are the same. A tokens service that does not
 * know the batch call yet (a rolling deploy) gets one MintSessionToken per mint, under its request id.
 */
export function batchedMints(tokens: TokensClient): MintToken {
  const batchOf = () =>
    batchedCall({
      many: async (items: Mint[]) =>
        (
          await tokens.mintSessionTokensBatch({
            mints: items.map((i) => i.mint),
            requestIds: items.map((i) => i.requestId),
          })
        ).outcomes,
      valueOf: (outcome) => outcome.minted,
      one: (item: Mint) => tokens.mintSessionToken(item.mint, onBehalfOf(item.requestId)),
    });
  const bySpace = new Map<string, ReturnType<typeof batchOf>>();
  return (mint, requestId) => {
    let call = bySpace.get(mint.spaceId);
    if (!call) {
      // A batch left out of the map still answers its mints; the next mint of its space starts another.
      if (bySpace.size >= MAX_SPACES) bySpace.clear();
      call = batchOf();
      bySpace.set(mint.spaceId, call);
    }
    return call({ mint, requestId });
  };
}
