import type { Io } from "./command.js";

export type Cell = string | number | boolean | null | undefined;

/** What commands print: results on stdout, notes for the operator on stderr (so stdout stays parseable). */
export interface Output {
  /** One JSON value on one line. */
  json(value: unknown): void;
  /** Aligned columns under upper-case headers; "(none)" for no rows. */
  table(headers: string[], rows: Cell[][]): void;
  /** "label: value" lines with the values aligned. */
  fields(pairs: [string, Cell][]): void;
  line(text: string): void;
  note(text: string): void;
}

function cellText(cell: Cell): string {
  return cell === null || cell === undefined || cell === "" ? "-" : String(cell);
}

export function formatTable(headers: string[], rows: Cell[][]): string {
  const texts = [headers.map((h) => h.toUpperCase()), ...rows.map((row) => row.map(cellText))];
  const widths = headers.map((_, col) => Math.max(...texts.map((row) => (row[col] ?? "").length)));
  return texts
    .map((row) =>
      row
        .map((text, col) => (col === row.length - 1 ? text : text.padEnd(widths[col] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export function formatFields(pairs: [string, Cell][]): string {
  const width = Math.max(...pairs.map(([label]) => label.length)) + 1;
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width)} ${cellText(value)}`).join("\n");
}

export function createOutput(io: Io): Output {
  return {
    json: (value) => io.stdout(`${JSON.stringify(value)}\n`),
    table: (headers, rows) => io.stdout(`${rows.length === 0 ? "(none)" : formatTable(headers, rows)}\n`),
    fields: (pairs) => io.stdout(`${formatFields(pairs)}\n`),
    line: (text) => io.stdout(`${text}\n`),
    note: (text) => io.stderr(`${text}\n`),
  };
}
