import postgres from "postgres";
import type { Database, Param, Queryable, QueryOptions, Row } from "./mod.ts";
import { guardClosedSocketWrites, sendBegin } from "./postgres_quirks.ts";

type Sql = postgres.Sql | postgres.TransactionSql | postgres.ReservedSql;

/** A statement as postgres.js makes it: sent when executed (or first awaited). */
const statement = (
  sql: Sql,
  { text, params, prepare }: { text: string; params: readonly Param[]; prepare?: boolean },
) => sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: prepare ?? false });

function queryable(sql: Sql): Queryable {
  return {
    async query<T extends Row>(
      text: string,
      params: readonly Param[] = [],
      options: QueryOptions = {},
    ) {
      return (await statement(sql, { text, params, prepare: options.prepare })) as unknown as T[];
    },
    async exec(script: string) {
      await sql.unsafe(script);
    },
  };
}

export interface PostgresOptions {
  poolSize?: number;
  /** Connect at once (the default), failing with a clear message when the server does not answer. */
  checkConnection?: boolean;
  /** application_name of its connections (pg_stat_activity shows which pool a statement is from). */
  applicationName?: string;
}

/**
 * A pool of connections to a Postgres server, each opened on first use.
 * Unless told not to, it connects at once, so a wrong URL fails here with a
 * clear message rather than on first use.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Database> {
  guardClosedSocketWrites();
  const sql = postgres(url, {
    max: options.poolSize ?? 10,
    connect_timeout: 5,
    idle_timeout: 60,
    onnotice: () => {},
    ...(options.applicationName
      ? { connection: { application_name: options.applicationName } }
      : {}),
    types: {
      // Our convention is JSON in as text (a ::json or ::jsonb cast); postgres.js
      // would otherwise JSON-encode that text a second time.
      json: {
        to: 114,
        from: [114, 3802],
        serialize: (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value)),
        parse: (text: string) => JSON.parse(text),
      },
    },
    // Timestamps come back as Date objects; bigint columns are cast in SQL.
  });
  try {
    if (options.checkConnection ?? true) await sql.unsafe("select 1");
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    const safeUrl = url.replace(/\/\/[^@/]*@/, "//***@");
    throw new Error(`cannot connect to Postgres at ${safeUrl}: ${(error as Error).message}`);
  }
  const base = queryable(sql);
  return {
    kind: "postgres",
    ...base,
    /**
     * Not postgres.js's `begin`, which waits for BEGIN's answer before the
     * first statement goes out: BEGIN is sent with it instead (postgres.js
     * pipelines the queries of one connection, answered in order), a round
     * trip fewer per transaction. BEGIN on a connection of its own cannot
     * fail but with the connection, which fails the statements after it too.
     */
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const connection = await sql.reserve();
      // A reserved connection that closes (the server restarted, the network dropped it) fails
      // the statements postgres.js had sent, but one sent after the close is written to no
      // socket and never settles, and neither does the ROLLBACK that follows a failure: the
      // transaction would hang and keep its connection from the pool for good. So every step
      // races the connection's close, as postgres.js's own begin() does.
      const begin = sendBegin(connection);
      const untilLost = <R>(work: PromiseLike<R>) => Promise.race([work, begin.closed]);
      try {
        const statements = queryable(connection);
        // Sent behind the statement marked last (QueryOptions.last), else after fn.
        let commit: Promise<unknown> | undefined;
        const tx: Queryable = {
          query<R extends Row>(
            text: string,
            params: readonly Param[] = [],
            options: QueryOptions = {},
          ) {
            const lost = begin.lost();
            if (lost) return Promise.reject(lost);
            if (commit) {
              return Promise.reject(new Error("a statement after the transaction's last one"));
            }
            if (!options.last) return untilLost(statements.query<R>(text, params, options));
            // Both executed now, in this order (queryable's await would send the
            // statement a microtask later, behind the COMMIT).
            const rows = statement(connection, { text, params, prepare: options.prepare })
              .execute();
            commit = connection.unsafe("commit").execute();
            commit.catch(() => {}); // awaited below, where its failure is reported
            return untilLost(rows.then((r) => r as unknown as R[]));
          },
          exec: (script) =>
            begin.lost()
              ? Promise.reject(begin.lost())
              : commit
              ? Promise.reject(new Error("a statement after the transaction's last one"))
              : untilLost(statements.exec(script)),
        };
        let result: T;
        try {
          [, result] = await untilLost(Promise.all([begin.answered, fn(tx)]));
          await untilLost(commit ?? connection.unsafe("commit"));
        } catch (error) {
          // After a COMMIT sent early, the failed transaction ended with it (as a rollback).
          // A lost connection ended it on the server; nothing is sent on it again.
          if (!begin.lost()) {
            await untilLost(commit ?? connection.unsafe("rollback")).catch(() => {});
          }
          throw error;
        }
        return result;
      } finally {
        begin.unwatch();
        // A closed connection is already back in postgres.js's pool, to connect again on
        // next use; releasing it would list it as open, and its next query would hang.
        if (!begin.lost()) connection.release();
      }
    },
    async session<T>(fn: (connection: Queryable) => Promise<T>): Promise<T> {
      const connection = await sql.reserve();
      try {
        return await fn(queryable(connection));
      } finally {
        connection.release();
      }
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}
