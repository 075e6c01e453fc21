/**
 * Bus subjects of the realtime path (gateway <-> pipeline worker) and of pipeline workers. Payloads are
 * the protobuf messages of avatar.pipeline.v1 (ClientFrame, ServerFrame, AssignSessionRequest/Response,
 * WorkerHeartbeat, WhepRequest/Response).
 */
export const realtimeSubjects = {
  /** Request/reply, served by the workers in queue group `workerQueue`: who runs a starting session. */
  assign: "pipeline.assign",
  workerQueue: "pipeline",
  /** Every worker publishes its WorkerHeartbeat here every few seconds. */
  heartbeat: "pipeline.heartbeat",
  /** Gateway -> worker: one ClientFrame per client message or socket event. */
  clientFrames: (sessionId: string) => `rt.${sessionId}.in`,
  /** Worker -> gateway: one ServerFrame per server message or close. */
  serverFrames: (sessionId: string) => `rt.${sessionId}.out`,
  /** Request/reply, served by the session's worker: a WHEP viewer's offer or delete. */
  whep: (sessionId: string) => `rt.${sessionId}.whep`,
} as const;
