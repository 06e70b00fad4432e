/**
 * The workloads comparing Cairn with SQLite, in id order, apart from the text rows so that the
 * browser's SQLite worker, which runs their SQLite sides, loads none of the text engines.
 */
import { BULK, WHOLE } from "./bulk.ts";
import type { SqlBenchWorkload } from "./common.ts";
import { DISK } from "./disk.ts";
import { LIFECYCLE } from "./lifecycle.ts";
import { MEMORY } from "./memory.ts";
import { MIXED } from "./mixed.ts";
import { POINT } from "./point.ts";
import { FRESH_FILTER, QUERIES } from "./queries.ts";

/** Memory runs first, before other rows have grown the heap and the process. */
export const SQL_WORKLOADS: readonly SqlBenchWorkload[] = [
  ...MEMORY,
  ...LIFECYCLE,
  ...POINT,
  ...BULK,
  ...QUERIES,
  ...WHOLE,
  ...MIXED,
  ...FRESH_FILTER,
  ...DISK,
];

export function sqlWorkloadById(id: string): SqlBenchWorkload {
  const workload = SQL_WORKLOADS.find((w) => w.id === id);
  if (!workload) throw new Error(`unknown workload ${id}, or one without a SQLite side`);
  return workload;
}
