// The counts of vitest's JSON reports (one per test phase), and what failed in each, by name.
// Prints "<passed> <failed>" on stdout; the per-phase lines and the failures go to stderr.
import { existsSync, readFileSync } from "node:fs";

const firstLine = (text) =>
  (text ?? "")
    .split("\n")
    .find((l) => l.trim() !== "")
    ?.trim()
    .slice(0, 300) ?? "";

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, "utf8"));
  const phase = file.replace(/.*\//, "").replace(/\.json$/, "");
  const failures = [];
  for (const result of report.testResults) {
    const path = result.name.replace(`${process.cwd()}/`, "");
    const failedTests = result.assertionResults.filter((t) => t.status === "failed");
    for (const t of failedTests) {
      failures.push(`${path} > ${t.fullName}: ${firstLine(t.failureMessages?.join("\n"))}`);
    }
    // A file that failed without a failed test (it did not load, or a beforeAll/afterAll hook threw and
    // its tests were skipped) is one failure.
    if (result.status === "failed" && failedTests.length === 0) {
      failures.push(
        `${path}: the file failed outside its tests (a hook, or it did not load; its error is printed above) ${firstLine(result.message)}`.trim(),
      );
    }
  }
  passed += report.numPassedTests;
  failed += failures.length;
  console.error(
    `${phase}: ${report.numPassedTests} passed, ${failures.length} failed, ${report.numPendingTests} skipped`,
  );
  for (const f of failures) console.error(`  failed in ${phase}: ${f}`);
}
console.log(passed, failed);
