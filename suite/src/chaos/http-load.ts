/** One kind of request the load sends, and which answers count as correct while a fault lasts. */
export interface LoadTarget {
  name: string;
  send(): Promise<Response>;
}

export interface Answer {
  target: string;
  status: number;
  /** The envelope's `code`, when the body is one. */
  code: number | undefined;
  retryAfter: string | null;
  /** The envelope's message (what went wrong, for an error). */
  message: string;
  at: number;
  /** The request failed without an HTTP answer (connection refused or reset). */
  unanswered: boolean;
}

/**
 * Requests sent at a steady pace across targets while faults come and go; every answer is kept with its
 * time, so that a scenario can judge the ones of each phase.
 */
export class HttpLoad {
  readonly answers: Answer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  private turn = 0;

  constructor(
    private readonly targets: LoadTarget[],
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.sendOne(), this.everyMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
  }

  between(from: number, to: number): Answer[] {
    return this.answers.filter((a) => a.at >= from && a.at < to);
  }

  private sendOne(): void {
    const target = this.targets[this.turn++ % this.targets.length];
    if (!target) return;
    const work = (async () => {
      try {
        const res = await target.send();
        const text = await res.text();
        let code: number | undefined;
        let message = "";
        try {
          ({ code, message = "" } = JSON.parse(text) as { code?: number; message?: string });
        } catch {
          code = undefined;
        }
        this.answers.push({
          target: target.name,
          status: res.status,
          code,
          retryAfter: res.headers.get("retry-after"),
          message,
          at: Date.now(),
          unanswered: false,
        });
      } catch {
        this.answers.push({
          target: target.name,
          status: 0,
          code: undefined,
          retryAfter: null,
          message: "",
          at: Date.now(),
          unanswered: true,
        });
      }
    })();
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}

/** Counts answers by status ("0" for none) into a report's request figures. */
export function tally(answers: Answer[], isFailure: (a: Answer) => boolean) {
  const byStatus: Record<string, number> = {};
  for (const a of answers) byStatus[String(a.status)] = (byStatus[String(a.status)] ?? 0) + 1;
  const failed = answers.filter(isFailure).length;
  return {
    total: answers.length,
    answered: answers.filter((a) => !a.unanswered).length,
    failed,
    byStatus,
  };
}

/** A 503 as the contract says: the envelope with code 5030 and a Retry-After header. */
export const isProper503 = (a: Answer) => a.status === 503 && a.code === 5030 && a.retryAfter !== null;

/** The load's requests are valid: anything but a success or a rate limit is a failure... */
export const notServed = (a: Answer) => a.unanswered || !(a.status < 300 || a.status === 429);

/** ...or, while a dependency is down, a proper 503. */
export const notServedNor503 = (a: Answer) => notServed(a) && !isProper503(a);
