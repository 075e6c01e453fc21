import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a hyphenated UUID; services check ids before they reach a uuid column. */
export function isUuid(value: string | undefined | null): value is string {
  return typeof value === "string" && uuidPattern.test(value);
}

export function toTimestamp(date: Date | null | undefined): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}

export function fromTimestamp(ts: Timestamp | undefined): Date | undefined {
  return ts ? timestampDate(ts) : undefined;
}
