import type {
  MintSessionTokenRequest,
  MintSessionTokenResponse,
  TokensService,
} from "@avatar/contracts/tokens";
import { connectErrorOf, type Pending, runWithRequestContext, TurnBatch } from "@avatar/runtime";
import { type Client, Code, ConnectError } from "@connectrpc/connect";

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

/** Most mints per call (the tokens service takes up to 256). */
const MAX_PER_CALL = 64;

/**
 * POST /v1/sessions/token's calls to the tokens service: the mints asked for in one turn of the event
 * loop go in one MintSessionTokensBatch call, each with its request id. Under load that is one call for
 * several requests, where each call costs both sides their HTTP and Connect handling; alone, a mint
 * waits only for the end of its turn. Each mint fails on its own, with the error MintSessionToken would
 * have given, so the public answers are the same. A tokens service that does not know the batch call
 * yet (a rolling deploy) gets one MintSessionToken per mint.
 */
export function batchedMints(tokens: TokensClient): MintToken {
  const batch = new TurnBatch<Mint, MintSessionTokenResponse>(
    async (waiting: Pending<Mint, MintSessionTokenResponse>[]) => {
      try {
        const { outcomes } = await tokens.mintSessionTokensBatch({
          mints: waiting.map((w) => w.item.mint),
          requestIds: waiting.map((w) => w.item.requestId),
        });
        waiting.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome?.error) w.reject(connectErrorOf(outcome.error));
          else if (outcome?.minted) w.resolve(outcome.minted);
          else w.reject(new ConnectError("no outcome for this mint", Code.Internal));
        });
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Unimplemented) throw err;
        await Promise.all(
          waiting.map(({ item, resolve, reject }) =>
            runWithRequestContext({ requestId: item.requestId }, () =>
              tokens.mintSessionToken(item.mint),
            ).then(resolve, reject),
          ),
        );
      }
    },
    { maxItems: MAX_PER_CALL },
  );
  return (mint, requestId) => batch.add({ mint, requestId });
}
