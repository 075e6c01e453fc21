import { PageRequestSchema } from "@avatar/contracts/common";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageInfo, pageWindow } from "../src/paging.js";

const request = (page: number, pageSize: number) => create(PageRequestSchema, { page, pageSize });

describe("pageWindow", () => {
  it("defaults to the first page of 20 when nothing is asked", () => {
    expect(DEFAULT_PAGE_SIZE).toBe(20);
    expect(pageWindow(undefined)).toEqual({ page: 1, pageSize: 20, offset: 0 });
    expect(pageWindow(request(0, 0))).toEqual({ page: 1, pageSize: 20, offset: 0 });
  });

  it("computes the offset of later pages", () => {
    expect(pageWindow(request(3, 10))).toEqual({ page: 3, pageSize: 10, offset: 20 });
  });

  it("keeps the page size from 1 to 100", () => {
    expect(MAX_PAGE_SIZE).toBe(100);
    expect(pageWindow(request(1, 1)).pageSize).toBe(1);
    expect(pageWindow(request(1, 100)).pageSize).toBe(100);
    expect(pageWindow(request(2, 101))).toEqual({ page: 2, pageSize: 100, offset: 100 });
    expect(pageWindow(request(1, -5)).pageSize).toBe(1);
  });

  it("treats pages below 1 as the first page", () => {
    expect(pageWindow(request(-3, 10))).toEqual({ page: 1, pageSize: 10, offset: 0 });
  });
});

describe("pageInfo", () => {
  it("reports the total count with the window actually used", () => {
    expect(pageInfo(pageWindow(request(2, 500)), 7)).toMatchObject({ count: 7, page: 2, pageSize: 100 });
  });
});
