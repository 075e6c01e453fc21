/** Classifies errors from the nats.js client into the cases the bus handles. */
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from "@nats-io/transport-node";
import { BusClosedError } from "../bus.js";

function causeOf(err: unknown): unknown {
  return err instanceof Error ? err.cause : undefined;
}

export function isNoResponders(err: unknown): boolean {
  return (
    (err instanceof RequestError && err.isNoResponders()) ||
    err instanceof NoRespondersError ||
    causeOf(err) instanceof NoRespondersError
  );
}

export function isTimeout(err: unknown): boolean {
  return err instanceof TimeoutError || causeOf(err) instanceof TimeoutError;
}

export function isClosedConnection(err: unknown): boolean {
  return err instanceof ClosedConnectionError || err instanceof DrainingConnectionError;
}

/** KV create/update lost the compare-and-set. */
export function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * The stream behind a subject is gone (a NATS restart loses memory-stored KV buckets; a wiped server
 * loses everything). Publishing to a subject without a stream surfaces as "JetStreamNotEnabled".
 */
export function isMissingStream(err: unknown): boolean {
  return (
    (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) ||
    (err instanceof Error && err.name === "JetStreamNotEnabled")
  );
}

export function closedToBusError(err: unknown): unknown {
  return isClosedConnection(err) ? new BusClosedError() : err;
}

/** A stream message looked up (or deleted) by sequence is not there. */
export function isMessageNotFound(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.NoMessageFound || /not found/i.test(err.message))
  );
}
