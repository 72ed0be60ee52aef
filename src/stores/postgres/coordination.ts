/**
 * The PostgreSQL inbox's coordination operations (the port's "Coordination": catch-up's leased lock and
 * marks), a row per name in the schema's `coordination` table (migration 2), each one statement.
 */
type Query = (text: string, values: unknown[]) => Promise<{ rowCount: number | null; rows: Array<Record<string, unknown>> }>;

export interface Coordination {
  tryLock(name: string, holder: string, ttlMs: number): Promise<boolean>;
  unlock(name: string, holder: string): Promise<void>;
  mark(name: string): Promise<number | undefined>;
  setMark(name: string, value: number): Promise<void>;
}

/** `s` is the quoted schema. */
export function coordination(s: string, query: Query): Coordination {
  const table = `${s}.coordination`;
  // Taken only when free, this holder's, or its lease ran out: otherwise the upsert changes no row.
  const lock = `INSERT INTO ${table} (name, holder, expires) VALUES ($1, $2, $3)
    ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires = EXCLUDED.expires
    WHERE ${table}.holder IS NULL OR ${table}.holder = EXCLUDED.holder OR ${table}.expires <= $4`;
  // GREATEST ignores a NULL: the first mark of a lock's row is taken as it is.
  const setMark = `INSERT INTO ${table} (name, mark) VALUES ($1, $2)
    ON CONFLICT (name) DO UPDATE SET mark = GREATEST(${table}.mark, EXCLUDED.mark)`;
  return {
    async tryLock(name, holder, ttlMs) {
      const now = Date.now();
      return (await query(lock, [name, holder, now + ttlMs, now])).rowCount === 1;
    },
    async unlock(name, holder) {
      await query(`UPDATE ${table} SET holder = NULL, expires = NULL WHERE name = $1 AND holder = $2`, [name, holder]);
    },
    async mark(name) {
      const { rows } = await query(`SELECT mark FROM ${table} WHERE name = $1`, [name]);
      const mark = rows[0]?.mark;
      // bigint comes back as text from node-postgres.
      return mark === null || mark === undefined ? undefined : Number(mark);
    },
    async setMark(name, value) {
      await query(setMark, [name, Math.round(value)]);
    },
  };
}
