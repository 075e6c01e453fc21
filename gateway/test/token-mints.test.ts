import {
  type MintSessionTokenRequest,
  MintSessionTokenRequestSchema,
  TokensService,
} from "@avatar/contracts/tokens";
import {
  callErrorOf,
  errorDetailOf,
  forwardRequestId,
  notFound,
  REQUEST_ID_HEADER,
  silentLogger,
} from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type ServiceImpl,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { batchedMints } from "../src/api/token-mints.js";

/** The mints of one turn reach the tokens service in one call; each answer is the one a call would give. */

const MISSING_AVATAR = "b0000000-0000-4000-8000-000000000000";

/** What the tokens double answers for one mint: a token, or a 404 for MISSING_AVATAR. */
function mintOne(mint: MintSessionTokenRequest) {
  if (mint.request?.avatarId === MISSING_AVATAR) throw notFound("Avatar not found", { field: "avatar_id" });
  return { sessionId: `session-of-${mint.spaceId}`, sessionToken: `token-of-${mint.spaceId}` };
}

/** A tokens service double over Connect (the client forwards request ids) that records its calls. */
function tokensDouble(batch?: ServiceImpl<typeof TokensService>["mintSessionTokensBatch"]) {
  const calls: string[] = [];
  const transport = createRouterTransport(
    ({ service }) =>
      service(TokensService, {
        async mintSessionToken(mint, ctx) {
          calls.push(`mintSessionToken ${ctx.requestHeader.get(REQUEST_ID_HEADER)}`);
          return mintOne(mint);
        },
        ...(batch
          ? {
              mintSessionTokensBatch: (req, ctx) => {
                calls.push(`mintSessionTokensBatch ${req.requestIds.join(",")}`);
                return batch(req, ctx);
              },
            }
          : {}),
      }),
    { transport: { interceptors: [forwardRequestId] } },
  );
  return { client: createClient(TokensService, transport), calls };
}

const answerEach: ServiceImpl<typeof TokensService>["mintSessionTokensBatch"] = async (req) => ({
  outcomes: req.mints.map((mint) => {
    try {
      return { minted: mintOne(mint) };
    } catch (err) {
      return { error: callErrorOf(err, silentLogger, "/test") };
    }
  }),
});

const mint = (spaceId: string, avatarId = "a0000000-0000-4000-8000-000000000000") =>
  create(MintSessionTokenRequestSchema, { spaceId, request: { avatarId } });

describe("batched mints", () => {
  it("sends a space's mints of one turn in one call with their request ids; a refusal fails only its own", async () => {
    const { client, calls } = tokensDouble(answerEach);
    const mintToken = batchedMints(client);
    const outcomes = await Promise.allSettled([
      mintToken(mint("s1"), "r1"),
      mintToken(mint("s1", MISSING_AVATAR), "r2"),
      mintToken(mint("s1"), "r3"),
    ]);
    expect(outcomes[0]).toMatchObject({ status: "fulfilled", value: { sessionToken: "token-of-s1" } });
    expect(outcomes[2]).toMatchObject({ status: "fulfilled", value: { sessionToken: "token-of-s1" } });
    const err = ConnectError.from((outcomes[1] as PromiseRejectedResult).reason);
    expect([err.code, err.rawMessage, errorDetailOf(err)?.field]).toEqual([
      Code.NotFound,
      "Avatar not found",
      "avatar_id",
    ]);
    expect(calls).toEqual(["mintSessionTokensBatch r1,r2,r3"]);
  });

  it("makes one MintSessionToken per mint, each under its request id, when the batch call is unknown", async () => {
    const { client, calls } = tokensDouble();
    const mintToken = batchedMints(client);
    const outcomes = await Promise.allSettled([
      mintToken(mint("s1"), "r1"),
      mintToken(mint("s2", MISSING_AVATAR), "r2"),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected"]);
    expect(ConnectError.from((outcomes[1] as PromiseRejectedResult).reason).code).toBe(Code.NotFound);
    expect(calls.sort()).toEqual(["mintSessionToken r1", "mintSessionToken r2"]);
  });

  it("batches per space: a space whose mint is slow holds back none of another space's", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const { client, calls } = tokensDouble(async (req, ctx) => {
      if (req.mints.some((m) => m.spaceId === "slow")) await gate;
      return answerEach(req, ctx);
    });
    const mintToken = batchedMints(client);
    const slow = mintToken(mint("slow"), "r1");
    const fast = await Promise.all([mintToken(mint("fast"), "r2"), mintToken(mint("fast"), "r3")]);
    expect(fast.map((m) => m.sessionToken)).toEqual(["token-of-fast", "token-of-fast"]);
    expect(calls.sort()).toEqual(["mintSessionTokensBatch r1", "mintSessionTokensBatch r2,r3"]);
    open();
    expect((await slow).sessionToken).toBe("token-of-slow");
  });
});
