import * as s from "../schema/index.js";

/** The largest page number: the services take it as an int32. */
export const MAX_PAGE = 2_147_483_647;

/**
 * page (1..MAX_PAGE, default 1) and page_size (1..100, default 20), as every paginated list takes them.
 * A larger page is a 422 like any other out-of-range value, never a failure further in.
 */
export const pageQuery = {
  page: s.int({ ge: 1, le: MAX_PAGE }).default(1),
  page_size: s.int({ ge: 1, le: 100 }).default(20),
};

export const pageRequest = (q: { page: number; page_size: number }) => ({
  page: q.page,
  pageSize: q.page_size,
});
