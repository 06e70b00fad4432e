/**
 * T01: a write in one tab shows in a live query of another tab of the same database (issue #18).
 * Tabs are a browser's: the row runs in Chromium, where the bench page opens one new OPFS database
 * twice, as two tabs do. The first open leads (the storage is its own database); the second
 * follows (in memory, linked to the leader over the database's BroadcastChannel).
 */
import { ItemSchema } from "../contenders/cairn.ts";
import type { TextCtx } from "../contenders/text.ts";
import { countLabel } from "../lib/format.ts";
import { NotApplicable, side, type TextWorkload, type Variant } from "../lib/types.ts";
import { Cairn } from "../../src/mod.ts";
import type { BenchWorkload } from "./common.ts";
import { everyWrite, type Latency, type Pair, timed, writes } from "./sync_latency.ts";

const REPOSITORY = "/bench/tabs";

/** Two opens of one new stored database; `from` writes, the other's live query is watched. */
async function tabPair(location: string, from: "leader" | "follower"): Promise<Pair> {
  const leader = await Cairn.open({ path: location, schemas: [ItemSchema] });
  const follower = await Cairn.open({ path: location, schemas: [ItemSchema] });
  const [leading, following] = [await leader.open(REPOSITORY), await follower.open(REPOSITORY)];
  const [writer, reader] = from === "leader" ? [leading, following] : [following, leading];
  const query = reader.query({ schema: ItemSchema });
  let shown = 0;
  let waiting: { count: number; resolve(): void } | undefined;
  query.subscribe((results) => {
    shown = results.length;
    if (waiting && shown >= waiting.count) waiting.resolve();
  });
  return {
    roundTrip: (i) =>
      new Promise<void>((resolve) => {
        waiting = { count: shown + 1, resolve };
        writer.create(ItemSchema, { title: `write ${i}`, count: i });
      }),
    async close() {
      query.close();
      await follower.close(); // first: its last writes wait for the leader's acknowledgement
      await leader.close();
    },
  };
}

const T01: TextWorkload<TextCtx> = {
  id: "T01.v1",
  title: "Write to live query, across tabs (both in the bench page)",
  family: "sync",
  unit: "ms",
  better: "lower",
  scale: "us",
  contenders: ["cairn"],
  baselines: [],
  variants: (quick): Variant[] =>
    (["leader", "follower"] as const).map((from) => ({
      label: `${countLabel(writes(quick))} writes, ${from} → ${
        from === "leader" ? "follower" : "leader"
      }`,
      items: 0,
      writes: writes(quick),
      from,
    })),
  timed: "From `repo.create` in one tab's database until the other tab's live query over the " +
    "repository holds the item: the writing tab seals and signs the block at the end of its " +
    "tick; a follower sends it to the leader, which verifies, imports and stores it (relaxed) and " +
    "re-runs its live query; the leader sends its own block to the followers, which verify, " +
    "import and re-run theirs. One write at a time; each sample is one write, and the latency " +
    "pass keeps every write.",
  fairness: "No contender: SQLite has no tabs of one database, and the row compares Cairn with " +
    "issue #18's target. Both tabs are the bench page (two opens of one directory), so their " +
    "work runs on one thread one after the other, where two real tabs run on two; the " +
    "BroadcastChannel hop between them is the browser's own either way.",
  runtimeNotes: {
    deno: "Tabs are a browser's: T01 runs in Chromium only.",
    node: "Tabs are a browser's: T01 runs in Chromium only.",
    browser: "T01 in Chromium: both tabs are the bench page, on a new OPFS directory per row.",
  },
  context: "issue #18 targets p99 ≤ 16 ms (one frame at 60 Hz); the p99 is in the latency table.",
  text: side({
    async setup(ctx: TextCtx, variant: Variant): Promise<Latency> {
      if (!("document" in globalThis)) {
        throw new NotApplicable("tabs are a browser's: T01 runs in Chromium only");
      }
      const from = variant.from as "leader" | "follower";
      const pair = await tabPair(ctx.storageLocation(), from);
      return { pair, next: 0, writes: variant.writes as number };
    },
    sample: timed,
    latency: everyWrite,
    teardown: (state: Latency) => state.pair.close(),
  }),
};

export const TABS: readonly BenchWorkload[] = [T01];
