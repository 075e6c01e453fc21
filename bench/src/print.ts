/** How the benchmarks print: a line on stdout, and a figure with a fixed number of digits ("-" for none). */

export const say = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

export const fixed = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : "-");
