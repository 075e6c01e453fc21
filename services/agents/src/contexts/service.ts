import { randomUUID } from "node:crypto";
import type { AgentsService, ContextLink } from "@avatar/contracts/agents";
import { invalidRequest, pageInfo, pageWindow } from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Changed, unannounced } from "../changes.js";
import { checkHttpUrl, checkName, checkText, missingResource } from "../checks.js";
import { limits } from "../limits.js";
import { ownContext, readableContext } from "../references.js";
import type { ContextLinkValue, Db } from "../schema.js";
import { contextToProto } from "./mapping.js";
import * as repo from "./repository.js";

type ContextRpcs = Pick<
  ServiceImpl<typeof AgentsService>,
  "createContext" | "listContexts" | "getContext" | "updateContext" | "deleteContext" | "copyContext"
>;

const COPY_SUFFIX = " (Copy)";

export function contextRpcs(db: Db, changed: Changed = unannounced): ContextRpcs {
  return {
    async createContext(req) {
      const row = await repo.insertContext(db, {
        id: randomUUID(),
        space_id: req.spaceId,
        name: checkName(req.name, "name", limits.contextName),
        prompt: checkText(req.prompt, "prompt", 1, limits.prompt),
        opening_text: checkText(req.openingText, "opening_text", 0, limits.openingText),
        links: checkLinks(req.links),
        is_public: req.isPublic,
      });
      return { context: contextToProto(row) };
    },

    async listContexts(req) {
      const window = pageWindow(req.page);
      const { rows, count } = await repo.listContexts(db, req.spaceId, window.offset, window.pageSize);
      return { contexts: rows.map(contextToProto), page: pageInfo(window, count) };
    },

    async getContext(req) {
      return { context: contextToProto(await readableContext(db, req.spaceId, req.contextId, "context_id")) };
    },

    async updateContext(req) {
      const current = await ownContext(db, req.spaceId, req.contextId, "context_id");
      const row = await repo.updateContext(db, req.spaceId, current.id, {
        ...(req.name !== undefined ? { name: checkName(req.name, "name", limits.contextName) } : {}),
        ...(req.prompt !== undefined ? { prompt: checkText(req.prompt, "prompt", 1, limits.prompt) } : {}),
        ...(req.openingText !== undefined
          ? { opening_text: checkText(req.openingText, "opening_text", 0, limits.openingText) }
          : {}),
        ...(req.setLinks ? { links: checkLinks(req.links) } : {}),
      });
      if (!row) throw missingResource("Context", "context_id");
      await changed(row.id);
      return { context: contextToProto(row) };
    },

    async deleteContext(req) {
      const { id } = await ownContext(db, req.spaceId, req.contextId, "context_id");
      if (!(await repo.deleteContext(db, req.spaceId, id))) throw missingResource("Context", "context_id");
      await changed(id);
      return {};
    },

    async copyContext(req) {
      const source = await readableContext(db, req.spaceId, req.contextId, "context_id");
      const name =
        req.name !== undefined ? checkName(req.name, "name", limits.contextName) : copyName(source.name);
      const row = await repo.insertContext(db, {
        id: randomUUID(),
        space_id: req.spaceId,
        name,
        prompt: source.prompt,
        opening_text: source.opening_text,
        links: source.links,
        is_public: false,
      });
      return { context: contextToProto(row) };
    },
  };
}

/** "<name> (Copy)", the original shortened when the whole would exceed the name limit. */
export function copyName(original: string): string {
  const room = limits.contextName - COPY_SUFFIX.length;
  const chars = [...original];
  return `${chars.length > room ? chars.slice(0, room).join("").trimEnd() : original}${COPY_SUFFIX}`;
}

function checkLinks(links: ContextLink[]): ContextLinkValue[] {
  if (links.length > limits.links) {
    throw invalidRequest(`links must have at most ${limits.links} entries`, { field: "links" });
  }
  return links.map((link, i) => ({
    url: checkHttpUrl(checkText(link.url, `links[${i}].url`, 1, limits.linkUrl), `links[${i}].url`),
    faq: checkText(link.faq, `links[${i}].faq`, 0, limits.linkFaq),
  }));
}
