import { type PageInfo, PageInfoSchema, type PageRequest } from "@avatar/contracts/common";
import { create } from "@bufbuild/protobuf";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface PageWindow {
  page: number;
  pageSize: number;
  offset: number;
}

/** The page a request asks for, with the contract's defaults (page 1, 20 per page, at most 100). */
export function pageWindow(request: PageRequest | undefined): PageWindow {
  const page = Math.max(1, request?.page || 1);
  const pageSize = Math.min(MAX_PAGE_SIZE, Math.max(1, request?.pageSize || DEFAULT_PAGE_SIZE));
  return { page, pageSize, offset: (page - 1) * pageSize };
}

export function pageInfo(window: PageWindow, count: number): PageInfo {
  return create(PageInfoSchema, { count, page: window.page, pageSize: window.pageSize });
}
