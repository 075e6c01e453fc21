import type { PageInfo } from "@avatar/contracts/common";

export interface Paginated<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The contract's page shape; next/previous are absolute URLs of the same query with another page. */
export function paginated<T>(
  results: T[],
  page: PageInfo | undefined,
  url: URL,
  baseUrl: string,
): Paginated<T> {
  const count = page?.count ?? results.length;
  const current = page?.page ?? 1;
  const size = page?.pageSize ?? (results.length || 1);
  const link = (n: number) => {
    const u = new URL(url.pathname + url.search, baseUrl);
    u.searchParams.set("page", String(n));
    return u.toString();
  };
  return {
    count,
    next: current * size < count ? link(current + 1) : null,
    previous: current > 1 ? link(Math.min(current - 1, Math.max(1, Math.ceil(count / size)))) : null,
    results,
  };
}
