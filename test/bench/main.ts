/**
 * `deno task bench [NAME ...]`: runs the named benchmarks (DEFAULT when none
 * is named). `deno task bench compare OLD.json NEW.json` prints the change of
 * every figure between two result files (test/bench/compare.ts). Each
 * benchmark is a module `test/bench/NAME.ts` exporting
 * `run(): Promise<BenchReport>`; this prints each report as a table and
 * writes all of them as JSON under test/bench/results/.
 */

export interface BenchRow {
  [column: string]: string | number | null;
}

export interface BenchReport {
  name: string;
  /** What was measured and how, in a sentence or two. */
  description: string;
  rows: BenchRow[];
  notes?: string[];
}

const AVAILABLE = [
  "content",
  "ingest",
  "retention",
  "stats",
  "reports",
  "footprint",
  "fuzz",
  "soak",
  "webhooks",
  "tracing",
];
/**
 * What `deno task bench` runs when no name is given: the ones that take a few
 * minutes. stats (10 million rows, about half an hour), fuzz (100,000
 * requests) and soak (10 minutes) run when named.
 */
const DEFAULT = ["content", "ingest", "retention", "footprint"];

async function exists(name: string): Promise<boolean> {
  try {
    await Deno.stat(new URL(`./${name}.ts`, import.meta.url));
    return true;
  } catch {
    return false;
  }
}

function printTable(report: BenchReport) {
  console.log(`\n## ${report.name}\n${report.description}\n`);
  if (report.rows.length) console.table(report.rows);
  for (const note of report.notes ?? []) console.log(`- ${note}`);
}

if (import.meta.main && Deno.args[0] === "compare") {
  const { main } = await import("./compare.ts");
  Deno.exit(await main(Deno.args.slice(1)));
}

if (import.meta.main) {
  const wanted = Deno.args.length ? Deno.args : DEFAULT;
  const reports: BenchReport[] = [];
  for (const name of wanted) {
    if (!AVAILABLE.includes(name)) {
      console.error(`unknown benchmark "${name}"; available: ${AVAILABLE.join(", ")}`);
      Deno.exit(2);
    }
    if (!(await exists(name))) {
      console.error(`benchmark "${name}" is not built yet`);
      continue;
    }
    const module = await import(`./${name}.ts`) as { run(): Promise<BenchReport> };
    const report = await module.run();
    printTable(report);
    reports.push(report);
  }
  const dir = new URL("./results/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  const file = new URL(`./bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`, dir);
  await Deno.writeTextFile(
    file,
    JSON.stringify({ at: new Date().toISOString(), reports }, null, 2) + "\n",
  );
  console.log(`\nresults written to ${file.pathname}`);
}
