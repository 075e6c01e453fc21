import { natsServerAvailable } from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, startCluster } from "../src/chaos/cluster.js";
import { type FaultReport, formatReport } from "../src/chaos/report.js";
import {
  gatewayKilled,
  natsStopped,
  outboxAfterCrash,
  postgresStopped,
  type Scenario,
  sessionsReplicaKilled,
  sharedLimits,
  TEST_TIMING,
  workerKilled,
  workerRollout,
} from "../src/chaos/scenarios.js";

/**
 * Faults at the separate-process level (the scenarios of `pnpm chaos`, with shorter outages): the whole
 * service as separate processes on a Postgres and a NATS server this test starts and stops, two of
 * each replicated process. Each test injects one fault, prints its figures, and checks them: requests
 * answered (503 in the envelope with Retry-After at most), sessions that go on, no client message lost,
 * every minute charged once and none missing. The tests run in order on one cluster; each leaves it
 * whole (a killed process is started again).
 */

const available = natsServerAvailable("the fault tests");

describe.skipIf(!available)("faults at the separate-process level", () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster();
  }, 240_000);

  afterAll(async () => {
    const codes = (await cluster?.stop()) ?? {};
    const unclean = Object.entries(codes).filter(([, code]) => code !== 0);
    // What a process that failed said last (a crash's stack) is the first thing to read.
    for (const [name] of unclean) {
      console.log(`--- ${name}'s output (its end)\n${cluster.topology.process(name).output().slice(-6_000)}`);
    }
    // Every process (those killed were started again) stops cleanly on SIGTERM.
    expect(unclean).toEqual([]);
  }, 60_000);

  async function run(scenario: Scenario): Promise<FaultReport> {
    const report = await scenario(cluster, TEST_TIMING);
    console.log(formatReport(report));
    return report;
  }

  /** The bill of the sessions in a report: every minute begun charged once, none missing. */
  function billedExactly(r: FaultReport): void {
    expect(r.minutes.duplicated).toBe(0);
    expect(r.minutes.charged).toBe(r.minutes.expected);
  }

  function allSessionsSurvived(r: FaultReport, count: number): void {
    expect(r.sessions).toEqual({ survived: count, ended: 0 });
    expect(r.messagesLost).toBe(0);
  }

  it("two gateways share limits: exactly 10 of a burst of 30 pass", async () => {
    const r = await run(sharedLimits);
    expect(r.requests.byStatus).toEqual({ "200": 10, "429": 20 });
  }, 30_000);

  it("NATS stopped under load: every request answered without 5xx, live sessions go on, nothing lost", async () => {
    const r = await run(natsStopped);
    expect(r.requests.failed).toBe(0);
    expect(r.requests.answered).toBe(r.requests.total);
    expect(r.requests.total).toBeGreaterThan(20);
    allSessionsSurvived(r, 2);
    // No takeover was needed: the owners kept their sessions through the outage.
    expect(r.figures.ownersKept).toBe(2);
    expect(r.figures.sentDuringOutage).toBeGreaterThan(0);
    billedExactly(r);
  }, 90_000);

  it("kill -9 of a pipeline worker under live sessions: the other takes them over, no minute lost or doubled", async () => {
    const r = await run(workerKilled);
    allSessionsSurvived(r, 2);
    expect(r.figures.moved).toBeGreaterThan(0);
    expect(r.figures.takeoverMs).toBeGreaterThan(0);
    expect(r.figures.takeoverMs).toBeLessThan(15_000);
    billedExactly(r);
  }, 90_000);

  it("a worker stopped by a rollout (SIGTERM) hands its sessions over and exits cleanly", async () => {
    const r = await run(workerRollout);
    allSessionsSurvived(r, 2);
    expect(r.figures.exitCode).toBe("0");
    expect(r.figures.handoverMs).toBeGreaterThan(0);
    billedExactly(r);
  }, 90_000);

  it("a sessions replica killed: requests go to the other, timers fire and minutes are charged exactly once", async () => {
    const r = await run(sessionsReplicaKilled);
    expect(r.requests.failed).toBe(0);
    allSessionsSurvived({ ...r, sessions: { ...r.sessions, ended: r.sessions.ended - 1 } }, 2);
    expect(r.figures.maxDurationEnd).toBe("5000 ms");
    billedExactly(r);
  }, 90_000);

  it("Postgres stopped: 503 in the envelope with Retry-After while down, recovery without restart", async () => {
    const r = await run(postgresStopped);
    expect(r.requests.failed).toBe(0);
    expect(r.figures.proper503).toBeGreaterThan(0);
    expect(r.figures.recoveredMs).toBeGreaterThanOrEqual(0);
    allSessionsSurvived(r, 2);
    billedExactly(r);
  }, 90_000);

  it("a gateway killed with sockets open: clients start again through the other and go on with the same session", async () => {
    const r = await run(gatewayKilled);
    expect(r.figures.sameSession).toBe(2);
    allSessionsSurvived(r, 2);
    billedExactly(r);
  }, 90_000);

  it("the outbox is drained after a crash: a session ended while NATS was down still adds its memory episode", async () => {
    const r = await run(outboxAfterCrash);
    expect(r.figures.stopStatus).toBe(200);
    expect(r.figures.outboxRowsAtCrash).toBeGreaterThan(0);
    expect(r.figures.outboxRowsAfter).toBe(0);
    expect(String(r.figures.memoryEpisode)).toMatch(/^added/);
    billedExactly(r);
  }, 150_000);
});
