import { createTestDatabase, type SpawnedProcess, spawnEntry, type TestDatabase } from "@avatar/testkit";
import type { Answers, Question, Ready } from "./media-server-process.js";

/**
 * The browser media tests' server: the suite on a fresh database of the run's Postgres, in a process of
 * its own (media-server-process.ts says why), asked things over its IPC channel.
 */
export class MediaServer {
  private next = 0;
  private readonly waiting = new Map<number, { resolve(a: unknown): void; reject(e: Error): void }>();

  private constructor(
    private readonly server: SpawnedProcess,
    private readonly db: TestDatabase,
    readonly gatewayUrl: string,
    readonly apiKey: string,
  ) {
    server.child.on("message", (m: { id: number; answer?: unknown; error?: string }) => {
      const waiter = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error !== undefined) waiter?.reject(new Error(`the media server: ${m.error}`));
      else waiter?.resolve(m.answer);
    });
    // A question the server can no longer answer fails now, not at the test's time-out.
    server.child.once("exit", (code) => {
      const gone = new Error(`the media server exited (${code}):\n${server.output()}`);
      for (const waiter of this.waiting.values()) waiter.reject(gone);
      this.waiting.clear();
    });
  }

  static async start(env: Record<string, string>): Promise<MediaServer> {
    const db = await createTestDatabase();
    const server = spawnEntry(
      "media server",
      "suite/test/media-server-process.ts",
      { ...env, DATABASE_URL: db.url },
      [],
      {
        ipc: true,
      },
    );
    try {
      const ready = await new Promise<Ready["ready"]>((resolve, reject) => {
        server.child.once("message", (m: Ready) => resolve(m.ready));
        server.child.once("exit", (code) =>
          reject(new Error(`the media server exited (${code}) before it was ready:\n${server.output()}`)),
        );
      });
      return new MediaServer(server, db, ready.gatewayUrl, ready.apiKey);
    } catch (error) {
      await server.stop();
      await db.drop();
      throw error;
    }
  }

  ask<Q extends Question>(question: Q): Promise<Answers[Q["op"]]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      if (!this.server.child.connected) {
        reject(new Error(`the media server is gone:\n${this.server.output()}`));
        return;
      }
      this.waiting.set(id, { resolve: resolve as (a: unknown) => void, reject });
      this.server.child.send({ id, question });
    });
  }

  /** A request to the public API with the demo space's key. */
  request(method: string, path: string, body: unknown): Promise<Response> {
    return fetch(`${this.gatewayUrl}${path}`, {
      method,
      headers: { "content-type": "application/json", "X-API-KEY": this.apiKey },
      body: JSON.stringify(body),
    });
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.drop();
  }
}
