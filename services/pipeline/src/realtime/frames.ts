import { type ClientFrame, ClientFrameSchema } from "@avatar/contracts/pipeline";
import { realtimeSubjects, type TurnPublisher } from "@avatar/runtime";
import { fromBinary } from "@bufbuild/protobuf";
import type { ServerEventInput } from "./mode.js";
import { type ServerFrameFields, serverFrameBytes } from "./server-frame-bytes.js";

/** The bus side of a session: ClientFrames in, ServerFrames out. */

export const readClientFrame = (data: Uint8Array): ClientFrame => fromBinary(ClientFrameSchema, data);

/** A server event as its JSON text: the runner's ids first; a mode cannot override them. */
export function serverEventJson(sessionId: string, event: ServerEventInput): string {
  const { type, sourceEventId, ...fields } = event;
  const ids = {
    type,
    event_id: crypto.randomUUID(),
    source_event_id: sourceEventId ?? null,
    session_id: sessionId,
  };
  return JSON.stringify(Object.assign({ ...ids }, fields, ids));
}

export class ServerFrames {
  private readonly subject: string;
  /** This worker's ownership epoch of the session, on every frame (the gateways fence on it). */
  epoch = 0;

  constructor(
    private readonly outbox: Pick<TurnPublisher, "publish">,
    private readonly sessionId: string,
    /** The acknowledgements due when an event goes out; they travel with it (InboundOrder.takeDue). */
    private readonly dueAcks: () => { connectionId: string; seq: number }[],
  ) {
    this.subject = realtimeSubjects.serverFrames(sessionId);
  }

  /** Acknowledges a connection's messages up to `ackSeq`; `resend` asks for those after it again. */
  ack(connectionId: string, ackSeq: number, resend: boolean): void {
    this.publish({ connectionId, ackSeq, resend });
  }

  /** One JSON message to one connection, or to all when connectionId is empty, with the acknowledgements due. */
  send(json: string, connectionId = ""): void {
    this.publish({ json, connectionId, acks: this.dueAcks() });
  }

  /** Closes one connection, or all when connectionId is empty. */
  close(code: number, reason: string, connectionId = ""): void {
    this.publish({ connectionId, close: true, closeCode: code, closeReason: reason });
  }

  private publish(fields: Omit<ServerFrameFields, "sessionId" | "epoch">) {
    const frame = serverFrameBytes({ ...fields, sessionId: this.sessionId, epoch: this.epoch });
    this.outbox.publish(this.subject, frame);
  }
}
