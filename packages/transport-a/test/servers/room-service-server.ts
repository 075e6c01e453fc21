/**
 * A local server of transportA's server API: the Twirp service `livekit.RoomService` (CreateRoom,
 * DeleteRoom, ListRooms) as a LiveKit server answers it, in JSON or protobuf as the request comes,
 * using transportA's own protocol messages (`@livekit/protocol`). Every call must carry
 * `Authorization: Bearer <token>` signed with the API secret (checked by the server SDK's TokenVerifier)
 * and the grant the real server asks for (roomCreate for create and delete, roomList for list); errors
 * come back in Twirp's JSON shape with Twirp's codes and statuses. The signalling path `/rtc` answers
 * 404, so a client that tries to join a room here fails quickly.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateRoomRequest,
  DeleteRoomRequest,
  DeleteRoomResponse,
  ListRoomsRequest,
  ListRoomsResponse,
  Room,
} from "@livekit/protocol";
import { TokenVerifier } from "livekit-server-sdk";

const PREFIX = "/twirp/livekit.RoomService/";

type Format = "json" | "protobuf";

export interface RecordedCall {
  method: string;
  format: Format;
  /** The request message in proto3 JSON. */
  body: unknown;
  /** The token's video grant, as the server read it. */
  grant: Record<string, unknown> | undefined;
  status: number;
}

class TwirpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class RoomServiceTestServer {
  readonly rooms = new Map<string, Room>();
  readonly calls: RecordedCall[] = [];
  /** When set, every call answers this status with Twirp's `unavailable` (or `internal`) error. */
  failWith: 500 | 503 | undefined;
  private nextSid = 1;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly verifier: TokenVerifier,
    private readonly now: () => Date,
  ) {}

  static async start(
    apiKey: string,
    apiSecret: string,
    options: { now?: () => Date } = {},
  ): Promise<RoomServiceTestServer> {
    let instance: RoomServiceTestServer | undefined;
    const server = createServer((req, res) => {
      void instance?.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    instance = new RoomServiceTestServer(
      server,
      `http://127.0.0.1:${port}`,
      new TokenVerifier(apiKey, apiSecret),
      options.now ?? (() => new Date()),
    );
    return instance;
  }

  /** The calls of one method, in order. */
  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (!path.startsWith(PREFIX)) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("404 page not found");
      return;
    }
    const method = path.slice(PREFIX.length);
    const format = formatOf(req.headers["content-type"]);
    const call: RecordedCall = {
      method,
      format: format ?? "json",
      body: undefined,
      grant: undefined,
      status: 200,
    };
    this.calls.push(call);
    try {
      if (req.method !== "POST") throw new TwirpFailure(404, "bad_route", `unsupported method ${req.method}`);
      if (!format)
        throw new TwirpFailure(404, "bad_route", `unexpected Content-Type: ${req.headers["content-type"]}`);
      call.grant = await this.authorize(req.headers.authorization);
      if (this.failWith)
        throw new TwirpFailure(
          this.failWith,
          this.failWith === 503 ? "unavailable" : "internal",
          "server is failing",
        );
      const answer = this.answer(method, format, raw, call);
      res.writeHead(200, { "content-type": format === "json" ? "application/json" : "application/protobuf" });
      res.end(format === "json" ? JSON.stringify(answer.toJson()) : Buffer.from(answer.toBinary()));
    } catch (err) {
      const failure =
        err instanceof TwirpFailure
          ? err
          : new TwirpFailure(500, "internal", err instanceof Error ? err.message : String(err));
      call.status = failure.status;
      res.writeHead(failure.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: failure.code, msg: failure.message }));
    }
  }

  private async authorize(header: string | undefined): Promise<Record<string, unknown>> {
    const token = /^Bearer (.+)$/.exec(header ?? "")?.[1];
    if (!token) throw new TwirpFailure(401, "unauthenticated", "no authorization header");
    try {
      const claims = await this.verifier.verify(token);
      return (claims.video ?? {}) as Record<string, unknown>;
    } catch (err) {
      throw new TwirpFailure(
        401,
        "unauthenticated",
        `invalid token: ${err instanceof Error ? err.message : err}`,
      );
    }
  }

  private answer(method: string, format: Format, raw: Buffer, call: RecordedCall) {
    const grant = call.grant ?? {};
    const need = (name: string) => {
      if (grant[name] !== true)
        throw new TwirpFailure(403, "permission_denied", `permissions denied: ${name} is required`);
    };
    switch (method) {
      case "CreateRoom": {
        const req = decode(CreateRoomRequest, format, raw);
        call.body = req.toJson();
        need("roomCreate");
        if (!req.name) throw new TwirpFailure(400, "invalid_argument", "room name is required");
        const existing = this.rooms.get(req.name);
        if (existing) return existing;
        const room = new Room({
          sid: `RM_${String(this.nextSid++).padStart(12, "0")}`,
          name: req.name,
          emptyTimeout: req.emptyTimeout,
          departureTimeout: req.departureTimeout,
          maxParticipants: req.maxParticipants,
          metadata: req.metadata,
          creationTime: BigInt(Math.floor(this.now().getTime() / 1000)),
          creationTimeMs: BigInt(this.now().getTime()),
        });
        this.rooms.set(room.name, room);
        return room;
      }
      case "DeleteRoom": {
        const req = decode(DeleteRoomRequest, format, raw);
        call.body = req.toJson();
        need("roomCreate");
        if (!this.rooms.delete(req.room))
          throw new TwirpFailure(404, "not_found", "requested room does not exist");
        return new DeleteRoomResponse();
      }
      case "ListRooms": {
        const req = decode(ListRoomsRequest, format, raw);
        call.body = req.toJson();
        need("roomList");
        const rooms = [...this.rooms.values()].filter(
          (r) => req.names.length === 0 || req.names.includes(r.name),
        );
        return new ListRoomsResponse({ rooms });
      }
      default:
        throw new TwirpFailure(404, "bad_route", `no handler for path "${PREFIX}${method}"`);
    }
  }
}

interface Decodable<T> {
  fromJson(json: never, options?: { ignoreUnknownFields?: boolean }): T;
  fromBinary(bytes: Uint8Array): T;
}

function decode<T>(type: Decodable<T>, format: Format, raw: Buffer): T {
  try {
    if (format === "protobuf") return type.fromBinary(new Uint8Array(raw));
    return type.fromJson(JSON.parse(raw.toString("utf8")) as never, { ignoreUnknownFields: true });
  } catch (err) {
    throw new TwirpFailure(
      400,
      "malformed",
      `the request could not be decoded: ${err instanceof Error ? err.message : err}`,
    );
  }
}

function formatOf(contentType: string | undefined): Format | undefined {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/json") return "json";
  if (type === "application/protobuf") return "protobuf";
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
