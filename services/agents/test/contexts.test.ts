// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${name}` placeholders are what these texts are about
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { copyName } from "../src/contexts/service.js";
import { agentsUnderTest, expectFailure, MISSING, SPACE_A, SPACE_B } from "./support.js";

const { s } = agentsUnderTest();

const newContext = (spaceId = SPACE_A, extra: { name?: string; isPublic?: boolean } = {}) =>
  s.agents
    .createContext({
      spaceId,
      name: extra.name ?? "Support",
      prompt: "You help ${customer} with ${product}.",
      openingText: "Hello ${customer}!",
      links: [{ url: "https://example.com/faq", faq: "Q and A" }],
      isPublic: extra.isPublic ?? false,
    })
    .then((r) => r.context ?? expect.fail("no context"));

describe("create and read", () => {
  it("stores the context and derives its required dynamic variables", async () => {
    const created = await newContext();
    expect(created).toMatchObject({
      spaceId: SPACE_A,
      name: "Support",
      openingText: "Hello ${customer}!",
      isPublic: false,
      requiredDynamicVariables: ["customer", "product"],
    });
    expect(created.links).toEqual([
      expect.objectContaining({ url: "https://example.com/faq", faq: "Q and A" }),
    ]);
    const { context } = await s.agents.getContext({ spaceId: SPACE_A, contextId: created.id });
    expect(context?.id).toBe(created.id);
    expect(context?.requiredDynamicVariables).toEqual(["customer", "product"]);
  });

  it("rejects names outside 1..255 characters and an empty prompt, naming the field", async () => {
    const base = { spaceId: SPACE_A, prompt: "p" };
    await expectFailure(
      s.agents.createContext({ ...base, name: "x".repeat(256) }),
      Code.InvalidArgument,
      "name",
    );
    await expectFailure(s.agents.createContext({ ...base, name: "   " }), Code.InvalidArgument, "name");
    await expectFailure(
      s.agents.createContext({ spaceId: SPACE_A, name: "n", prompt: "" }),
      Code.InvalidArgument,
      "prompt",
    );
    await expectFailure(
      s.agents.createContext({ ...base, name: "n", links: [{ url: "ftp://x.example", faq: "" }] }),
      Code.InvalidArgument,
      "links[0].url",
    );
    const ok = await s.agents.createContext({ ...base, name: "é".repeat(255) });
    expect(ok.context?.name).toHaveLength(255);
  });

  it("lists the space's own contexts newest first, paginated", async () => {
    for (const name of ["one", "two", "three"]) await newContext(SPACE_A, { name });
    await newContext(SPACE_B, { name: "other" });
    const first = await s.agents.listContexts({ spaceId: SPACE_A, page: { page: 1, pageSize: 2 } });
    expect(first.contexts.map((c) => c.name)).toEqual(["three", "two"]);
    expect(first.page).toMatchObject({ count: 3, page: 1, pageSize: 2 });
    const second = await s.agents.listContexts({ spaceId: SPACE_A, page: { page: 2, pageSize: 2 } });
    expect(second.contexts.map((c) => c.name)).toEqual(["one"]);
  });

  it("answers another space's private context, an unknown id and a non-UUID alike: 404", async () => {
    const theirs = await newContext(SPACE_B);
    for (const contextId of [theirs.id, MISSING, "not-a-uuid"]) {
      await expectFailure(s.agents.getContext({ spaceId: SPACE_A, contextId }), Code.NotFound, "context_id");
    }
  });

  it("lets every space read a public context", async () => {
    const pub = await newContext(SPACE_B, { isPublic: true });
    const { context } = await s.agents.getContext({ spaceId: SPACE_A, contextId: pub.id });
    expect(context?.isPublic).toBe(true);
  });
});

describe("update and delete", () => {
  it("changes only the fields given; links are replaced when set_links is set", async () => {
    const c = await newContext();
    const renamed = await s.agents.updateContext({ spaceId: SPACE_A, contextId: c.id, name: "Renamed" });
    expect(renamed.context).toMatchObject({ name: "Renamed", prompt: c.prompt, openingText: c.openingText });
    expect(renamed.context?.links).toHaveLength(1);
    const changed = await s.agents.updateContext({
      spaceId: SPACE_A,
      contextId: c.id,
      prompt: "Only ${x}",
      setLinks: true,
      links: [],
    });
    expect(changed.context?.requiredDynamicVariables).toEqual(["customer", "x"]);
    expect(changed.context?.links).toEqual([]);
  });

  it("never changes another space's context, public or not", async () => {
    const pub = await newContext(SPACE_B, { isPublic: true });
    await expectFailure(
      s.agents.updateContext({ spaceId: SPACE_A, contextId: pub.id, name: "Mine now" }),
      Code.NotFound,
      "context_id",
    );
    await expectFailure(
      s.agents.deleteContext({ spaceId: SPACE_A, contextId: pub.id }),
      Code.NotFound,
      "context_id",
    );
    expect((await s.agents.getContext({ spaceId: SPACE_B, contextId: pub.id })).context?.name).toBe(
      "Support",
    );
  });

  it("deletes once; the second delete is a 404", async () => {
    const c = await newContext();
    await s.agents.deleteContext({ spaceId: SPACE_A, contextId: c.id });
    await expectFailure(
      s.agents.deleteContext({ spaceId: SPACE_A, contextId: c.id }),
      Code.NotFound,
      "context_id",
    );
    await expectFailure(s.agents.getContext({ spaceId: SPACE_A, contextId: c.id }), Code.NotFound);
  });
});

describe("copy", () => {
  it("copies a public context of another space as a private one named '<name> (Copy)'", async () => {
    const pub = await newContext(SPACE_B, { isPublic: true, name: "Shared" });
    const { context: copy } = await s.agents.copyContext({ spaceId: SPACE_A, contextId: pub.id });
    expect(copy).toMatchObject({
      spaceId: SPACE_A,
      name: "Shared (Copy)",
      isPublic: false,
      prompt: pub.prompt,
      openingText: pub.openingText,
      requiredDynamicVariables: pub.requiredDynamicVariables,
    });
    expect(copy?.id).not.toBe(pub.id);
    expect(copy?.links).toEqual(pub.links);
  });

  it("takes the name given", async () => {
    const own = await newContext();
    const { context } = await s.agents.copyContext({ spaceId: SPACE_A, contextId: own.id, name: "Second" });
    expect(context?.name).toBe("Second");
  });

  it("refuses another space's private context: 404", async () => {
    const theirs = await newContext(SPACE_B);
    await expectFailure(
      s.agents.copyContext({ spaceId: SPACE_A, contextId: theirs.id }),
      Code.NotFound,
      "context_id",
    );
  });

  it("keeps the default name within the limit", () => {
    expect(copyName("Plain")).toBe("Plain (Copy)");
    const long = copyName("x".repeat(255));
    expect([...long]).toHaveLength(255);
    expect(long.endsWith(" (Copy)")).toBe(true);
  });
});

describe("space ids", () => {
  it("refuses a space id that is not a UUID and reads one in any case", async () => {
    await expectFailure(s.agents.listContexts({ spaceId: "space-1" }), Code.InvalidArgument, "space_id");
    await expectFailure(
      s.agents.createContext({ spaceId: "", name: "n", prompt: "p" }),
      Code.InvalidArgument,
      "space_id",
    );
    const c = await newContext();
    const { context } = await s.agents.getContext({
      spaceId: SPACE_A.toUpperCase(),
      contextId: c.id.toUpperCase(),
    });
    expect(context?.id).toBe(c.id);
  });
});
