import { failure, issue, type Loc, type ParseResult, success, type ValidationIssue } from "./issues.js";
import type { JsonSchema } from "./json-schema.js";
import { type Mode, Schema } from "./schema.js";

/**
 * pydantic `datetime` in lax mode (its parser is the speedate crate): ISO 8601 date-times, plain dates
 * (midnight), and unix timestamps as numbers or numeric strings (seconds, or milliseconds beyond 2e10).
 * The value is a JS Date, so precision stops at milliseconds and a time without offset is taken as UTC.
 */

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt_ ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;
const TIMESTAMP = /^[+-]?(\d+\.?\d*|\.\d+)$/;
const MAX_SECONDS = 253402300799; // 9999-12-31T23:59:59Z
const MIN_SECONDS = -62135596800; // 0001-01-01T00:00:00Z

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) =>
  month === 2 ? (isLeap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

function parsingIssue(type: string, loc: Loc, input: unknown, error: string): ValidationIssue {
  const prefix = type === "datetime_parsing" ? "a valid datetime" : "a valid datetime or date";
  return issue(type, loc, `Input should be ${prefix}, ${error}`, input, { error });
}

function fromTimestamp(value: number, loc: Loc, input: unknown): ParseResult<Date> {
  const seconds = Math.abs(value) > 2e10 ? value / 1000 : value;
  if (seconds > MAX_SECONDS) {
    return failure(
      parsingIssue("datetime_parsing", loc, input, "dates after 9999 are not supported as unix timestamps"),
    );
  }
  if (seconds < MIN_SECONDS) {
    return failure(
      parsingIssue("datetime_parsing", loc, input, "dates before 0000 are not supported as unix timestamps"),
    );
  }
  return success(new Date(Math.round(seconds * 1000)));
}

/** The fault speedate's date parser reports, used when a string is no date-time. */
function dateFault(text: string): string | undefined {
  if (text.length < 10) return "input is too short";
  const digits = (from: number, to: number) => /^\d+$/.test(text.slice(from, to));
  if (!digits(0, 4)) return "invalid character in year";
  if (text[4] !== "-") return "invalid date separator, expected `-`";
  if (!digits(5, 7)) return "invalid character in month";
  if (text[7] !== "-") return "invalid date separator, expected `-`";
  if (!digits(8, 10)) return "invalid character in day";
  const [year, month, day] = [Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10))];
  if (month < 1 || month > 12) return "month value is outside expected range of 1-12";
  if (day < 1 || day > daysIn(year, month)) return "day value is outside expected range";
  if (text.length > 10) return "unexpected extra characters at the end of the input";
  return undefined;
}

function utcDate(year: number, month: number, day: number, ms = 0): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return new Date(date.getTime() + ms);
}

function fromString(text: string, loc: Loc): ParseResult<Date> {
  if (TIMESTAMP.test(text)) return fromTimestamp(Number(text), loc, text);
  const match = DATE_TIME.exec(text);
  if (match) {
    const part = (index: number) => Number(match[index] ?? 0);
    const [year, month, day, hour, minute, second] = [part(1), part(2), part(3), part(4), part(5), part(6)];
    const micros = Number((match[7] ?? "").slice(0, 6).padEnd(6, "0"));
    const sign = match[9];
    const [offsetHours, offsetMinutes] = [part(10), part(11)];
    const validDate = month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
    const validTime = hour <= 23 && minute <= 59 && second <= 59;
    if (validDate && validTime && offsetHours <= 23 && offsetMinutes <= 59) {
      if (year === 0) return failure(parsingIssue("datetime_parsing", loc, text, "year 0 is out of range"));
      const offset = sign === undefined ? 0 : (sign === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
      const ms = ((hour * 60 + minute - offset) * 60 + second) * 1000 + Math.floor(micros / 1000);
      return success(utcDate(year, month, day, ms));
    }
  }
  const fault = dateFault(text);
  if (fault !== undefined) return failure(parsingIssue("datetime_from_date_parsing", loc, text, fault));
  if (text.startsWith("0000"))
    return failure(parsingIssue("datetime_parsing", loc, text, "year 0 is out of range"));
  return success(utcDate(Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10))));
}

export class DateTimeSchema extends Schema<Date> {
  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<Date> {
    // Strict (Python) mode wants a datetime object, which JSON never holds.
    if (!mode.strict && typeof input === "number" && Number.isFinite(input))
      return fromTimestamp(input, loc, input);
    if (!mode.strict && typeof input === "string") return fromString(input, loc);
    return failure(issue("datetime_type", loc, "Input should be a valid datetime", input));
  }

  protected kindLabel(): string {
    return "datetime";
  }

  protected kindJsonSchema(): JsonSchema {
    return { type: "string", format: "date-time" };
  }
}

export const datetime = (): DateTimeSchema => new DateTimeSchema();
