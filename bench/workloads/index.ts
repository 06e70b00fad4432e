/** Every workload, in id order. Add a module's list here to add its rows everywhere. */
import type { BenchWorkload } from "./common.ts";
import { GROWTH } from "./growth.ts";
import { TEXT_PUBLISHED } from "./text_published.ts";
import { TEXT_TRACES } from "./text_traces.ts";
import { SQL_WORKLOADS } from "./versus_sqlite.ts";
import { SYNC_CATCHUP } from "./sync_catchup.ts";
import { SYNC_FANOUT } from "./sync_fanout.ts";
import { SYNC_LATENCY } from "./sync_latency.ts";
import { SYNC_POSTGRES } from "./sync_postgres.ts";
import { TABS } from "./tabs.ts";

/**
 * The rows against SQLite first (memory leading them), then the text rows, then sync and tabs,
 * then how cost grows (the longest rows, at up to a million items).
 */
export const WORKLOADS: readonly BenchWorkload[] = [
  ...SQL_WORKLOADS,
  ...TEXT_TRACES,
  ...TEXT_PUBLISHED,
  ...SYNC_LATENCY,
  ...SYNC_FANOUT,
  ...SYNC_CATCHUP,
  ...SYNC_POSTGRES,
  ...TABS,
  ...GROWTH,
];
