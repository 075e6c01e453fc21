import { type Route, route } from "../http/route.js";
import * as memory from "./memory.js";

/** Session memories. */
export const memoryRoutes: Route[] = [
  route({
    method: "POST",
    path: "/v1/memory",
    summary: "Create a memory from an ended FULL session with a transcript",
    auth: "api_key",
    rateLimit: "default",
    body: memory.createMemoryBody,
    handle: memory.createMemory,
  }),
  route({
    method: "GET",
    path: "/v1/memory",
    summary: "List the space's memories",
    auth: "api_key",
    rateLimit: "default",
    query: memory.memoryListQuery,
    handle: memory.listMemories,
  }),
  route({
    method: "GET",
    path: "/v1/memory/{memory_id}",
    summary: "Get a memory with its content and session episodes",
    auth: "api_key",
    rateLimit: "default",
    params: memory.memoryPath,
    handle: memory.getMemory,
  }),
  route({
    method: "DELETE",
    path: "/v1/memory/{memory_id}",
    summary: "Delete a memory and its episodes",
    auth: "api_key",
    rateLimit: "default",
    status: 204,
    params: memory.memoryPath,
    handle: memory.deleteMemory,
  }),
];
