import * as s from "../schema/index.js";

/** page (>= 1, default 1) and page_size (1..100, default 20), as every paginated list takes them. */
export const pageQuery = {
  page: s.int({ ge: 1 }).default(1),
  page_size: s.int({ ge: 1, le: 100 }).default(20),
};

export const pageRequest = (q: { page: number; page_size: number }) => ({
  page: q.page,
  pageSize: q.page_size,
});
