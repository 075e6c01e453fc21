import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

/** ISO 8601 with milliseconds and Z, or null. */
export function isoTime(ts: Timestamp | undefined): string | null {
  return ts ? timestampDate(ts).toISOString() : null;
}

/** Empty strings of optional proto fields become null on the wire. */
export function orNull(value: string): string | null {
  return value === "" ? null : value;
}
