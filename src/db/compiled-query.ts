import { createHash } from 'node:crypto';
import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/**
 * A query written once with Kysely's builder and compiled once: each call runs the same
 * SQL text with new parameters. Kysely builds and compiles a query on every execution,
 * which costs more than the lookup itself on the API's hot paths (issue 28).
 *
 * `build` gets placeholders standing for the parameters (values of the right type, never
 * read) and must use each exactly once, in the order they are given, as values (`where`
 * operands): the compiled text then has exactly one parameter per placeholder, in that
 * order, which is checked at the first compilation. Values stay parameters, never SQL.
 */
export function compiledQuery<DB, Params extends readonly unknown[], Row>(
  db: Kysely<DB>,
  placeholders: Params,
  build: (db: Kysely<DB>, ...params: Params) => Compilable<Row>,
): (...params: Params) => Promise<Row[]> {
  let compiled: CompiledQuery<Row> | undefined;
  return async (...params) => {
    compiled ??= compileOnce(db, placeholders, build, true);
    return (await db.executeQuery<Row>({ ...compiled, parameters: params })).rows;
  };
}

/**
 * compiledQuery for repositories made anew for every transaction (issue 28): defined once
 * at module level, run on whichever database or transaction is given, and compiled once
 * per database. A transaction shares its database's adapter (and compiler, and plugins),
 * so the text compiled on one serves the other; the SQL differs only between engines.
 * Not prepared by name on PostgreSQL: these run inside transactions, where a statement a
 * newer server's migration made stale ("cached plan must not change result type", a column
 * added under a `returning *`) aborts the transaction, and no retry of the one call helps.
 */
export function definedQuery<DB, Params extends readonly unknown[], Row>(
  placeholders: Params,
  build: (db: Kysely<DB>, ...params: Params) => Compilable<Row>,
): (db: Kysely<DB>, ...params: Params) => Promise<Row[]> {
  const compiled = new WeakMap<object, CompiledQuery<Row>>();
  return async (db, ...params) => {
    const adapter = db.getExecutor().adapter;
    let query = compiled.get(adapter);
    if (!query) {
      query = compileOnce(db, placeholders, build, false);
      compiled.set(adapter, query);
    }
    return (await db.executeQuery<Row>({ ...query, parameters: params })).rows;
  };
}

/** Compiles a query with its placeholders, checked to be its parameters in order, and names it for PostgreSQL when `prepared`. */
function compileOnce<DB, Params extends readonly unknown[], Row>(
  db: Kysely<DB>,
  placeholders: Params,
  build: (db: Kysely<DB>, ...params: Params) => Compilable<Row>,
  prepared: boolean,
): CompiledQuery<Row> {
  const query = build(db, ...placeholders).compile();
  if (query.parameters.length !== placeholders.length || query.parameters.some((value, i) => value !== placeholders[i]))
    throw new Error(`compiledQuery: the query's parameters are not its placeholders in order: ${query.sql}`);
  if (prepared) preparedNames.set(query.sql, `fh_${createHash('sha256').update(query.sql).digest('hex').slice(0, 16)}`);
  return query;
}

/** SQL texts of compiled queries, and the name each is prepared under on PostgreSQL. */
const preparedNames = new Map<string, string>();

/**
 * The name a PostgreSQL connection keeps this SQL text prepared under, or undefined for
 * SQL that is not a compiled query: only these few, fixed texts are prepared by name (a
 * prepared statement lives as long as its connection; the builder's other texts are
 * many, some built per call, and stay unnamed). Names are derived from the text, so the
 * same text has the same name in every server and on every connection.
 */
export function preparedStatementName(sql: string): string | undefined {
  return preparedNames.get(sql);
}
