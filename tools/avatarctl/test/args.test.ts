import { randomUUID } from "node:crypto";
import { testIdentities } from "@avatar/testkit";
import { describe, expect, it } from "vitest";
import { parseCreditAmount, parseSeconds, resolveServiceUrls } from "../src/args.js";
import { commands } from "../src/cli.js";
import { UsageError } from "../src/errors.js";
import { usageLine } from "../src/help.js";
import { formatTable } from "../src/output.js";
import { cli } from "./support.js";

/** The command line alone: no service is running, so nothing here may reach one. */

const id = randomUUID();
const operatorKey = testIdentities.privateKeys.avatarctl;
const allUrls = {
  TOKENS_URL: "http://127.0.0.1:9",
  CATALOG_URL: "http://127.0.0.1:9",
  SESSIONS_URL: "http://127.0.0.1:9",
  SERVICE_IDENTITY_KEY: operatorKey,
};

describe("help", () => {
  it.each([
    [["help"]],
    [["--help"]],
    [["-h"]],
    [["space", "--help"]],
    [["space", "help"]],
    [["help", "import"]],
    [["help", "import", "avatars"]],
    [["key", "revoke", "--help", "--bogus"]],
  ])("%j prints help on stdout and exits 0", async (argv) => {
    const result = await cli(argv);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^(Usage: |avatarctl: operator tool)/);
  });

  it.each(commands.map((c) => [`${c.group} ${c.name}`, c] as const))(
    "%s --help lists all its options",
    async (_n, c) => {
      const result = await cli([c.group, c.name, "--help"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: ${usageLine(c)}`);
      for (const name of Object.keys(c.options)) expect(result.stdout).toContain(`--${name}`);
      expect(result.stdout).toContain("--tokens-url URL");
    },
  );

  it("the main help names every command", async () => {
    const { stdout } = await cli(["help"]);
    for (const c of commands) expect(stdout).toContain(`${c.group} ${c.name}`);
  });
});

describe("usage errors exit 2 with one line on stderr", () => {
  it.each([
    [[], /missing command/],
    [["frob"], /unknown command "frob" \(commands: space, key, signing-key, credits, import/],
    [["space"], /missing command after "space": one of create, list, get, update/],
    [["space", "frob"], /unknown command "space frob"/],
    [["help", "space", "frob"], /unknown command "space frob"/],
    [["space", "create"], /missing --name/],
    [["space", "create", "--name"], /--name needs a value/],
    [["space", "create", "--name", "--json"], /--name needs a value/],
    [["space", "create", "--name", "  "], /--name must not be empty/],
    [
      ["space", "create", "--name", "A", "--tier", "gold"],
      /--tier must be one of free, starter, pro, scale \(got "gold"\)/,
    ],
    [["space", "create", "--name", "A", "--credits", "0"], /--credits must be a positive decimal/],
    [["space", "create", "--name", "A", "--credits", "1e3"], /--credits must be a positive decimal/],
    [
      ["space", "create", "--name", "A", "--max-session-duration", "0"],
      /--max-session-duration must be a positive/,
    ],
    [["space", "create", "--name", "A", "--max-session-duration", "1.5"], /--max-session-duration must be/],
    [
      ["space", "create", "--name", "A", "--max-session-duration", "3000000000"],
      /--max-session-duration must be/,
    ],
    [["space", "create", "--name", "A", "--json=yes"], /--json takes no value/],
    [["space", "list", "--bogus"], /unknown option --bogus \(see "avatarctl space list --help"\)/],
    [["space", "list", "extra"], /unexpected argument "extra"/],
    [["space", "get", "--space", "acme"], /--space must be a UUID \(got "acme"\)/],
    [["space", "update", "--space", id], /nothing to update/],
    [
      ["space", "update", "--space", id, "--max-session-duration", "-1"],
      /--max-session-duration must be a whole number .*\(got "-1"\)/,
    ],
    [
      ["space", "create", "--name", "A", "--credits", "-5"],
      /--credits must be a positive decimal .*\(got "-5"\)/,
    ],
    [["space", "create", "--name", "-x"], /--name needs a value \(write --name=-VALUE/],
    [["key", "create"], /missing --space/],
    [["key", "revoke", "--key", "12"], /--key must be a UUID/],
    [["credits", "grant", "--space", id], /missing --amount/],
    [["credits", "grant", "--space", id, "--amount", "ten"], /--amount must be a positive decimal/],
    [
      ["credits", "grant", "--space", id, "--amount", "1", "--idempotency-key", ""],
      /--idempotency-key must not be empty/,
    ],
    [["import", "avatars"], /missing FILE/],
    [["import", "voices", "a.json", "b.json"], /unexpected argument "b.json"/],
    [["import", "voices", "a.json", "--space", "x"], /--space must be a UUID/],
  ])("%j", async (argv, message) => {
    const result = await cli(argv, allUrls);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^avatarctl: [^\n]+\n$/);
  });

  it("names the flag and variable of a service URL that is missing or not http", async () => {
    const noSessions = { TOKENS_URL: allUrls.TOKENS_URL, SERVICE_IDENTITY_KEY: operatorKey };
    const missing = await cli(["credits", "grant", "--space", id, "--amount", "1"], noSessions);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toMatch(
      /no URL for the sessions service: pass --sessions-url, set SESSIONS_URL, or start the suite here/,
    );
    const bad = await cli(["space", "list", "--tokens-url", "tokens:8080"], {
      SERVICE_IDENTITY_KEY: operatorKey,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/tokens service URL must be an http\(s\) URL/);
  });

  it("asks only for the services a command needs", async () => {
    const result = await cli(["import", "voices", "/nonexistent/voices.json"], {
      CATALOG_URL: allUrls.CATALOG_URL,
      SERVICE_IDENTITY_KEY: operatorKey,
    });
    expect(result.stderr).toMatch(/cannot read \/nonexistent\/voices.json: no such file/);
    const withSpace = await cli(["import", "voices", "v.json", "--space", id], {
      CATALOG_URL: allUrls.CATALOG_URL,
      SERVICE_IDENTITY_KEY: operatorKey,
    });
    expect(withSpace.stderr).toMatch(/no URL for the tokens service/);
  });
});

describe("service URLs", () => {
  it("takes the flag over the environment, before or after the command words", async () => {
    // Port 9 refuses connections: reaching it (exit 1, unavailable) proves which URL was used.
    const env = { TOKENS_URL: "not a url", SERVICE_IDENTITY_KEY: operatorKey };
    for (const argv of [
      ["--tokens-url", "http://127.0.0.1:9", "space", "list"],
      ["space", "list", "--tokens-url=http://127.0.0.1:9"],
    ]) {
      const result = await cli(argv, env);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^avatarctl: .*\(unavailable\)\n$/);
    }
  });

  it("strips trailing slashes and keeps only the needed services", () => {
    expect(
      resolveServiceUrls(["tokens"], {}, { TOKENS_URL: "http://tokens:8080/", CATALOG_URL: "junk" }),
    ).toEqual({
      tokens: "http://tokens:8080",
    });
  });
});

describe("value parsers", () => {
  it("credit amounts are positive decimal strings, kept as typed", () => {
    expect(parseCreditAmount("100", "amount")).toBe("100");
    expect(parseCreditAmount("0.25", "amount")).toBe("0.25");
    for (const bad of ["0", "0.00", "-1", ".5", "1.", "1,5", "NaN", ""]) {
      expect(() => parseCreditAmount(bad, "amount")).toThrow(UsageError);
    }
  });

  it("seconds are whole, positive unless zero is allowed, and fit an int32", () => {
    expect(parseSeconds("600", "s")).toBe(600);
    expect(parseSeconds("0", "s", true)).toBe(0);
    expect(() => parseSeconds("0", "s")).toThrow(UsageError);
    expect(() => parseSeconds("2147483648", "s")).toThrow(UsageError);
    expect(parseSeconds("2147483647", "s")).toBe(2147483647);
  });
});

describe("tables", () => {
  it("aligns columns and shows empty cells as -", () => {
    expect(
      formatTable(
        ["id", "name"],
        [
          ["1", "short"],
          ["22", null],
        ],
      ),
    ).toBe("ID  NAME\n1   short\n22  -");
  });
});
