/** Every workload, in id order. Add a module's list here to add its rows everywhere. */
import { BULK, WHOLE } from "./bulk.ts";
import type { BenchWorkload } from "./common.ts";
import { DISK } from "./disk.ts";
import { LIFECYCLE } from "./lifecycle.ts";
import { MEMORY } from "./memory.ts";
import { MIXED } from "./mixed.ts";
import { POINT } from "./point.ts";
import { QUERIES } from "./queries.ts";

/** Memory runs first, before other rows have grown the heap and the process. */
export const WORKLOADS: readonly BenchWorkload[] = [
  ...MEMORY,
  ...LIFECYCLE,
  ...POINT,
  ...BULK,
  ...QUERIES,
  ...WHOLE,
  ...MIXED,
  ...DISK,
];

export function workloadById(id: string): BenchWorkload {
  const workload = WORKLOADS.find((w) => w.id === id);
  if (!workload) throw new Error(`unknown workload ${id}`);
  return workload;
}
