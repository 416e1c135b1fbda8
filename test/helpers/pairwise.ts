/**
 * All-pairs (pairwise) combinations of test factors: every value of each
 * factor meets every value of each other factor in at least one row, in far
 * fewer rows than the full cross product. Greedy: each row starts from the
 * first pair not yet met and takes, factor by factor, the value that meets
 * the most new pairs (on a tie, the one in the fewest rows so far, then the
 * first), so the rows depend only on the factors and a run asks the same
 * combinations every time.
 */

export type Value = string | number;
export type Factors = Record<string, readonly Value[]>;
export type Row<F extends Factors> = { [K in keyof F]: F[K][number] };

/**
 * The pairwise rows of `factors`; `allowed` refuses combinations that cannot
 * be. It is also asked about rows still being made, with only some factors
 * set: it must allow those unless the factors present rule them out.
 */
export function allPairs<F extends Factors>(
  factors: F,
  allowed: (row: Partial<Row<F>>) => boolean = () => true,
): Row<F>[] {
  const keys = Object.keys(factors);
  const ok = (row: Record<string, Value>) => allowed(row as Partial<Row<F>>);
  const id = (a: string, x: Value, b: string, y: Value) => JSON.stringify([a, x, b, y]);
  const unmet = new Map<string, [string, Value, string, Value]>();
  for (const [i, a] of keys.entries()) {
    for (const b of keys.slice(i + 1)) {
      for (const x of factors[a]) {
        for (const y of factors[b]) {
          if (ok({ [a]: x, [b]: y })) unmet.set(id(a, x, b, y), [a, x, b, y]);
        }
      }
    }
  }
  const rows: Row<F>[] = [];
  const used = new Map<string, number>();
  const uses = (key: string, value: Value) => used.get(JSON.stringify([key, value])) ?? 0;
  while (unmet.size > 0) {
    const [a, x, b, y] = unmet.values().next().value!;
    const row: Record<string, Value> = { [a]: x, [b]: y };
    for (const key of keys) {
      if (key in row) continue;
      let best: Value | undefined;
      let bestMet = -1;
      for (const value of factors[key]) {
        if (!ok({ ...row, [key]: value })) continue;
        let met = 0;
        for (const other of keys) {
          if (!(other in row)) continue;
          const [p, q] = keys.indexOf(other) < keys.indexOf(key) ? [other, key] : [key, other];
          const pair = p === other ? id(p, row[other], q, value) : id(p, value, q, row[other]);
          if (unmet.has(pair)) met++;
        }
        if (met > bestMet || (met === bestMet && uses(key, value) < uses(key, best!))) {
          [best, bestMet] = [value, met];
        }
      }
      if (best === undefined) {
        throw new Error(`no allowed value of ${key} for ${JSON.stringify(row)}`);
      }
      row[key] = best;
    }
    for (const [i, p] of keys.entries()) {
      used.set(JSON.stringify([p, row[p]]), uses(p, row[p]) + 1);
      for (const q of keys.slice(i + 1)) unmet.delete(id(p, row[p], q, row[q]));
    }
    rows.push(row as Row<F>);
  }
  return rows;
}
