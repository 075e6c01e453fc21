import { type Pending, TurnBatch } from "@avatar/runtime";
import { CompiledQuery, type Insertable, type Kysely, type Transaction } from "kysely";
import type { SessionRow, SessionsDatabase, SessionTable } from "./schema.js";

/** The columns a new session's insert sets, in the order of its parameters. */
export const NEW_SESSION_COLUMNS = [
  "id",
  "space_id",
  "api_key_id",
  "state",
  "mode",
  "is_sandbox",
  "source",
  "avatar_id",
  "embed_id",
  "context_id",
  "voice_agent_id",
  "memory_id",
  "config",
  "credit_rate",
  "max_session_duration",
  "created_at",
  "updated_at",
  "last_activity_at",
  "connection_state",
  "start_deadline_at",
] as const satisfies readonly (keyof SessionTable)[];

export type NewSessionValues = Required<
  Pick<Insertable<SessionTable>, (typeof NEW_SESSION_COLUMNS)[number]>
> & { id: string; state: "CREATED" };

type Db = Kysely<SessionsDatabase> | Transaction<SessionsDatabase>;

/** What a creation is answered with: the session's row, or only its id (all a batch's caller needs). */
export type CreatedAnswer = "row" | "id";
type Created = SessionRow | Pick<SessionRow, "id">;

/**
 * One statement for `n` new sessions, so one round trip. Nothing else is written: the session.created
 * notice of the session's history is read from the row (session-events.ts), and nothing goes on the bus
 * (the first event of a session is session.started). A row whose id exists is not inserted and not
 * answered; the others are answered whole or by id (reading thirty columns back is a share of a mint
 * when nobody reads them).
 * Parameters: each row's columns.
 *
 * Written out rather than built with kysely: a mint runs it, and building it cost more CPU than sending
 * it. Its text depends only on `n` and the answer, so Postgres keeps each one prepared (runtime's
 * prepared-statements).
 */
function statementFor(n: number, answer: CreatedAnswer): string {
  let p = 0;
  const rows: string[] = [];
  for (let i = 0; i < n; i++) rows.push(`(${NEW_SESSION_COLUMNS.map(() => `$${++p}`).join(", ")})`);
  return `with created as (
  insert into sessions (${NEW_SESSION_COLUMNS.join(", ")})
  values ${rows.join(", ")}
  on conflict (id) do nothing
  returning *
)
select ${answer === "row" ? "*" : "id"} from created`;
}

const statements = new Map<string, string>();
const statement = (n: number, answer: CreatedAnswer): string => {
  const key = `${n} ${answer}`;
  let text = statements.get(key);
  if (!text) {
    text = statementFor(n, answer);
    statements.set(key, text);
  }
  return text;
};

/** Inserts new sessions in one statement; answers those inserted (not those whose id existed). */
export async function insertCreated(db: Db, batch: readonly NewSessionValues[]): Promise<SessionRow[]>;
export async function insertCreated(
  db: Db,
  batch: readonly NewSessionValues[],
  answer: CreatedAnswer,
): Promise<Created[]>;
export async function insertCreated(
  db: Db,
  batch: readonly NewSessionValues[],
  answer: CreatedAnswer = "row",
): Promise<Created[]> {
  const parameters: unknown[] = [];
  for (const values of batch) for (const column of NEW_SESSION_COLUMNS) parameters.push(values[column]);
  const query = CompiledQuery.raw(statement(batch.length, answer), parameters);
  const { rows } = await db.executeQuery<Created>(query);
  return rows;
}

interface Creation {
  values: NewSessionValues;
  answer: CreatedAnswer;
}

/**
 * New sessions inserted together (group commit): the creations that reach it in the same turn of the
 * event loop share one statement, one round trip and one commit. Under load that is several mints per
 * insert, which is where a mint's Postgres time and its socket writes went; alone, a creation waits for
 * nothing but the end of the current turn. With `maxInFlight`, the creations that come while that many
 * statements are out wait for one to return and share the next. Each caller gets its own row, or its id
 * when that is all it asked for (undefined when its id existed). When the shared statement fails, each
 * creation is tried on its own, so that one refused row fails only its own caller.
 */
export class CreationBatch {
  private readonly batch: TurnBatch<Creation, Created | undefined>;

  constructor(
    private readonly db: Kysely<SessionsDatabase>,
    options: {
      /** The most rows one statement takes (and so the most statement texts Postgres keeps prepared). */
      maxRows?: number;
      /** The most statements out at once (SESSIONS_CREATION_INSERTS_IN_FLIGHT); 0 or absent: no limit. */
      maxInFlight?: number;
    } = {},
  ) {
    // An id at most once per statement: a retried creation of the same id waits for the next one,
    // where it finds the row the first one made.
    this.batch = new TurnBatch((waiting) => this.flush(waiting), {
      maxItems: options.maxRows ?? 32,
      key: (c) => c.values.id,
      maxInFlight: options.maxInFlight || undefined,
    });
  }

  /** Inserts the session; answers its row, or its id alone when asked (undefined when its id existed). */
  insert(values: NewSessionValues): Promise<SessionRow | undefined>;
  insert(values: NewSessionValues, answer: CreatedAnswer): Promise<Created | undefined>;
  insert(values: NewSessionValues, answer: CreatedAnswer = "row"): Promise<Created | undefined> {
    return this.batch.add({ values, answer });
  }

  private async flush(batch: Pending<Creation, Created | undefined>[]): Promise<void> {
    const answer = batch.some((w) => w.item.answer === "row") ? "row" : "id";
    try {
      const rows = await insertCreated(
        this.db,
        batch.map((w) => w.item.values),
        answer,
      );
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const w of batch) w.resolve(byId.get(w.item.values.id));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      await Promise.all(
        batch.map((w) =>
          insertCreated(this.db, [w.item.values], w.item.answer).then((rows) => w.resolve(rows[0]), w.reject),
        ),
      );
    }
  }
}
