/**
 * The "GoatDB's published figures" section of docs/benchmarks.md: per runtime and row, GoatDB's
 * published figure and its ratio to the SQLite of its own run, beside Cairn trusted's median and
 * its ratio to the SQLite profile of ours set up most like GoatDB's, and which ratio is lower.
 * The figures and what GoatDB's harness times are in bench/lib/goatdb_published.ts.
 */
import { contenderInfo } from "../contenders/list.ts";
import type { Envelope, RuntimeResult } from "../lib/envelope.ts";
import { num } from "../lib/format.ts";
import {
  GOATDB_LEFT_OUT,
  GOATDB_ROWS,
  GOATDB_SOURCE,
  GOATDB_SYSTEM,
  type GoatRow,
} from "../lib/goatdb_published.ts";
import { summarize } from "../lib/stats.ts";
import { type RuntimeName, RUNTIMES, type Unit } from "../lib/types.ts";
import { WORKLOADS } from "../workloads/index.ts";
import { ratioText } from "./ratio.ts";
import { RUNTIME_TITLE } from "./view.ts";

/** The Cairn contender set beside GoatDB's: no signing, as GoatDB's harness ran both columns. */
export const GOATDB_CAIRN = "cairn-trusted";

/** Our SQLite profile nearest the SQLite of GoatDB's run, per runtime. */
export const GOATDB_SQLITE: Record<RuntimeName, string> = {
  deno: "sqlite-full",
  node: "sqlite-full",
  browser: "sqlite-wasm-opfs",
};

/** Ratios within this factor of each other are called even: the runs differ in too much else. */
export const EVEN_WITHIN = 1.25;

export type GoatVerdict = "Cairn" | "GoatDB" | "even" | "not compared" | "no figure";

export interface GoatLine {
  row: GoatRow;
  runtime: RuntimeName;
  /** GoatDB's figure set beside ours (µs), and which column it is. */
  goat: number;
  goatColumn: "default" | "trusted";
  goatRatio: number;
  /** The Cairn workload id (with the version found in the run), and its medians in µs. */
  workload?: string;
  cairn?: number;
  sqlite?: number;
  cairnRatio?: number;
  verdict: GoatVerdict;
  /** Why there is no verdict. */
  why?: string;
}

const TO_US: Partial<Record<Unit, number>> = { "µs/op": 1, "µs": 1, "ms": 1000 };

/** The newest version of `base` ("W11") the run has rows of, the current one first. */
function workloadIn(result: RuntimeResult, base: string): string | undefined {
  const current = WORKLOADS.find((w) => w.id.startsWith(`${base}.`))?.id;
  const ids = new Set(
    result.rows.filter((r) => r.workload.startsWith(`${base}.`)).map((r) => r.workload),
  );
  if (current && ids.has(current)) return current;
  const version = (id: string) => Number(id.slice(id.indexOf(".v") + 2));
  return [...ids].sort((a, b) => version(b) - version(a))[0];
}

/** The median of a measured cell, in µs. */
function medianUs(
  result: RuntimeResult,
  workload: string,
  variant: string,
  contender: string,
): number | undefined {
  const row = result.rows.find((r) =>
    r.workload === workload && r.variant === variant && r.contender === contender
  );
  const factor = row && TO_US[row.unit];
  if (!row || row.status !== "ok" || row.samples.length === 0 || factor === undefined) {
    return undefined;
  }
  return summarize(row.samples).median * factor;
}

/** GoatDB's lower ratio of its two columns (only the default column in Chromium). */
function goatSide(row: GoatRow, runtime: RuntimeName) {
  const f = row.figures[runtime];
  const trusted = f.trusted !== undefined && f.trusted < f.goat;
  const goat = trusted ? f.trusted! : f.goat;
  return {
    goat,
    goatColumn: trusted ? "trusted" as const : "default" as const,
    goatRatio: goat / f.sqlite,
  };
}

export function goatLines(envelope: Envelope): GoatLine[] {
  const out: GoatLine[] = [];
  for (const runtime of RUNTIMES) {
    const result = envelope.runtimes[runtime];
    if (!result) continue;
    for (const row of GOATDB_ROWS) {
      const line: GoatLine = { row, runtime, ...goatSide(row, runtime), verdict: "no figure" };
      line.workload = workloadIn(result, row.workload);
      if (line.workload) {
        line.cairn = medianUs(result, line.workload, row.variant, GOATDB_CAIRN);
        line.sqlite = medianUs(result, line.workload, row.variant, GOATDB_SQLITE[runtime]);
      }
      if (line.cairn !== undefined && line.sqlite !== undefined) {
        line.cairnRatio = line.cairn / line.sqlite;
      }
      const why = row.notCompared?.[runtime];
      if (why) {
        line.verdict = "not compared";
        line.why = why;
      } else if (line.cairnRatio !== undefined) {
        const apart = line.cairnRatio / line.goatRatio;
        line.verdict = apart > EVEN_WITHIN ? "GoatDB" : apart < 1 / EVEN_WITHIN ? "Cairn" : "even";
      } else {
        line.why = "our run has no figure for this row";
      }
      out.push(line);
    }
  }
  return out;
}

function us(value: number | undefined): string {
  if (value === undefined) return "n/a";
  return value >= 1000 ? `${num(value / 1000)} ms` : `${num(value)} µs`;
}

function verdictCell(line: GoatLine): string {
  switch (line.verdict) {
    case "Cairn":
      return "Cairn";
    case "GoatDB":
      return "**GoatDB**";
    case "even":
      return `even (within ${EVEN_WITHIN}×)`;
    default:
      return line.verdict;
  }
}

function table(lines: readonly GoatLine[], runtime: RuntimeName): string[] {
  const sqlite = contenderInfo(GOATDB_SQLITE[runtime]).short;
  const out = [
    `| GoatDB row | GoatDB | GoatDB ÷ its SQLite | Cairn row | Cairn trusted | Cairn ÷ ${sqlite} | ` +
    "Lower ratio |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const line of lines) {
    const column = line.goatColumn === "trusted" ? " (trusted)" : "";
    out.push(
      `| ${line.row.name} | ${us(line.goat)}${column} | ${ratioText(line.goatRatio)} | ` +
        `${line.workload ?? line.row.workload} ${line.row.variant} | ${us(line.cairn)} | ` +
        `${line.cairnRatio === undefined ? "n/a" : ratioText(line.cairnRatio)} | ` +
        `${verdictCell(line)} |`,
    );
  }
  return out;
}

function tally(lines: readonly GoatLine[]): string {
  const count = (v: GoatVerdict) => lines.filter((l) => l.verdict === v).length;
  const rows = (n: number) => `${n} row${n === 1 ? "" : "s"}`;
  return `Cairn's ratio lower in ${rows(count("Cairn"))}, GoatDB's in ${
    rows(count("GoatDB"))
  }, even in ${count("even")}; ${count("not compared")} not compared` +
    (count("no figure") > 0 ? `, ${count("no figure")} without a figure of ours` : "") + ".";
}

/** Names the older workload versions a table took its Cairn figures from. */
function olderVersions(lines: readonly GoatLine[]): string[] {
  const older = lines.filter((l) => l.workload && !WORKLOADS.some((w) => w.id === l.workload)).map((
    l,
  ) => l.workload!);
  if (older.length === 0) return [];
  return [
    `Figures of ${[...new Set(older)].join(", ")} are of versions older than the code's ` +
    "(Changes since these runs); the current versions take their place after the next full run.",
    "",
  ];
}

export function goatdbSection(envelope: Envelope): string[] {
  const lines = goatLines(envelope);
  if (lines.length === 0) return [];
  const src = GOATDB_SOURCE;
  const out = [
    "## GoatDB's published figures",
    "",
    "GoatDB is the closest existing system to Cairn. It cannot be installed here (it is on JSR, " +
    "which this machine cannot reach, and not on npm), so these are not measurements of ours: " +
    `they are the averages GoatDB publishes (\`${src.path}\` in ${src.repository} at commit ` +
    `${src.commit.slice(0, 12)}), set beside Cairn's medians from the runs named in Setup. ` +
    "What each of its rows times was read from its benchmark code at commit " +
    `${src.harnessCommit.slice(0, 12)} (\`benchmarks/\`, \`shared/runner.ts\`).`,
    "",
    "- **Different machines:** GoatDB's figures come from an Apple M4 Pro under macOS, ours " +
    "from the machine in Setup; absolute times are not comparable. Each side's ratio to the " +
    "SQLite of its own run is the closest comparison, and even that differs by SQLite's setup, " +
    "the driver and the harness.",
    "- **Averages against medians:** GoatDB publishes means of 10 samples (3 for its open and " +
    "100k rows; Chromium's counts are not published, its harness's defaults are the same); ours " +
    "are medians of ≥ 30 samples (≥ 7 for ms rows).",
    "- **Which GoatDB figure:** the lower ratio of its default and trusted columns (Chromium has " +
    "only the default). Its harness creates every database with `trusted: true`, so as its code " +
    "reads neither column signs its commits; the two differ where their code differs (Bulk " +
    "create: the default column also flushes; Read 100k: another read call). Set beside it is " +
    "Cairn trusted (no signing, an append awaited per write); Cairn's signed figures are in the " +
    "runtime tables.",
    "- **Its SQLite:** node:sqlite with its defaults (rollback journal, synchronous = FULL) on " +
    "Deno and Node, so our ratio is to SQL FULL, our profile set up the same; macOS's fsync " +
    "does not flush the drive's cache, Linux's does, so a commit costs SQLite more here. In " +
    "Chrome, sqlite-wasm's worker API on the `opfs` VFS, asked for WAL and synchronous = " +
    "NORMAL, one message to the worker per statement; our ratio is to WASM OPFS (opfs-sahpool, " +
    "WAL, NORMAL), whose worker runs a row's whole loop from one message.",
    `- **Lower ratio:** the side whose ratio to its SQLite is lower; within ${EVEN_WITHIN}× ` +
    "of each other, even. Rows whose work differs say how below the tables; rows where the two " +
    "ratios do not compare like with like are shown without a verdict, with the reason. In " +
    "Chromium, GoatDB's SQLite paid a worker round trip per statement: where that round trip is " +
    "the whole of its figure (Count, Keys: one statement over 10 rows) the row has no verdict; " +
    "where it only weighs on it (Read item, Update item, Bulk read, the queries) the verdict " +
    "stands, and it stands against Cairn where GoatDB's ratio is the lower.",
    "",
  ];
  for (const runtime of RUNTIMES) {
    const mine = lines.filter((l) => l.runtime === runtime);
    if (mine.length === 0) continue;
    out.push(
      `### ${RUNTIME_TITLE[runtime]}: GoatDB on ${GOATDB_SYSTEM[runtime]}`,
      "",
      ...table(mine, runtime),
      "",
      tally(mine),
      "",
      ...olderVersions(mine),
    );
    const reasons = new Map<string, string[]>();
    for (const line of mine.filter((l) => l.why)) {
      reasons.set(line.why!, [...reasons.get(line.why!) ?? [], line.row.name]);
    }
    if (reasons.size > 0) {
      for (const [why, names] of reasons) {
        out.push(`- **${names.join(", ")}, not compared:** ${why}.`);
      }
      out.push("");
    }
  }
  out.push("### What each GoatDB row times, and how ours differs", "");
  for (const row of GOATDB_ROWS) {
    out.push(`- **${row.name}** (${row.workload}): ${row.goatTimed}. ${row.differs}.`);
  }
  out.push(
    "",
    "Left out: " + GOATDB_LEFT_OUT.map((t) => `${t}.`).join(" "),
    "",
  );
  return out;
}
