/**
 * X01–X02: the two real editing traces of bench/data/ replayed by every text engine. X01 is one
 * writer's typing (seph-blog1), each transaction its own commit: time, memory, history and
 * checkpoint bytes, and the time to load the final text, for a replay in a burst (X01a–f) and
 * for one where each transaction is written before the next (X01g–i, one block each). X02 is three writers' concurrent
 * typing (clownschool), replayed with one replica per branch exchanging what they lack where
 * branches merge (bench/lib/replay_plan.ts): time, history and snapshot bytes.
 */
import type { TextCtx } from "../contenders/text.ts";
import {
  checkText,
  type Pace,
  replay,
  runPlan,
  type Stored,
  type TextReplica,
} from "../contenders/text_engine.ts";
import { yjsEngine } from "../contenders/text_yjs.ts";
import { type ReplayPlan, replayPlan } from "../lib/replay_plan.ts";
import { now } from "../lib/timer.ts";
import {
  concurrentIn,
  concurrentPrefix,
  type ConcurrentTrace,
  type ConcurrentTxn,
  loadTrace,
  type Patch,
  sequentialIn,
  sequentialPrefix,
  type SequentialTrace,
  type TraceFile,
  traceLabel,
  TRACES,
} from "../lib/traces.ts";
import { side, type Variant } from "../lib/types.ts";
import { type BenchWorkload, heap } from "./common.ts";
import {
  cairnTargets,
  kB,
  madeOnce,
  requireHeapVisible,
  TEXT_ROW,
  TIME_TARGETS,
} from "./text_common.ts";

/**
 * Transactions replayed in quick mode: a prefix of each trace, labelled as one (clownschool's
 * first 300 still fork and merge: 5 replicas, 51 exchanges).
 */
const QUICK_TXNS = { sequential: 500, concurrent: 300 };

function traceVariants(trace: TraceFile, quickTxns: number) {
  return (quick: boolean): Variant[] => {
    const txns = quick ? quickTxns : trace.txns;
    return [{ label: traceLabel(trace, txns), items: 0, txns }];
  };
}

// ── X01: the sequential trace ───────────────────────────────────────────────────────────────

interface Sequential {
  ctx: TextCtx;
  label: string;
  txns: readonly (readonly Patch[])[];
  expected: string;
  pace: Pace;
}

async function sequential(ctx: TextCtx, variant: Variant, pace: Pace): Promise<Sequential> {
  const trace = await loadTrace(TRACES.sequential, ctx.readData) as SequentialTrace;
  const prefix = sequentialPrefix(trace, variant.txns as number);
  return {
    ctx,
    label: variant.label,
    txns: sequentialIn(prefix, ctx.engine().units),
    expected: prefix.endContent,
    pace,
  };
}

/** A new document (on disk for Cairn) with the trace replayed into it and committed. */
async function replayed(s: Sequential): Promise<TextReplica> {
  const replica = await s.ctx.engine().create({ onDisk: true });
  await replay(replica, s.txns, s.pace);
  await replica.settle();
  checkText(replica.text(), s.expected, s.label);
  return replica;
}

/** The replayed document, stored once per contender, size and pace for the rows that read it. */
function storedReplay(s: Sequential): Promise<Stored> {
  return madeOnce(s.ctx, `X01 ${s.label} ${s.pace}`, async () => (await replayed(s)).store());
}

const SEQUENTIAL = {
  ...TEXT_ROW,
  variants: traceVariants(TRACES.sequential, QUICK_TXNS.sequential),
} as const;

const ON_DISK = "Cairn writes its database on disk (relaxed durability: appended as it goes, " +
  "fsynced once by the final `db.flush()`); Yjs and Automerge keep their documents in memory " +
  "and store nothing";

const BURST = "Transactions one after another, each in a tick of its own (an `await` between " +
  "them), each one transaction of the engine (Cairn: one commit). Cairn seals the first tick's " +
  "commit into a block at once; the commits of the ticks that end while that block is being " +
  "written wait and are sealed together into the next block (its default group commit), and so " +
  "on: a burst makes few large blocks";

const WRITTEN_EACH = "Each transaction waits until the previous one is in the engine's storage, " +
  "as edits typed at a human pace do (Cairn: its own commit sealed, signed and appended to the " +
  "log before the next — one block per transaction; Yjs and Automerge keep the document in " +
  "memory and wait for nothing)";

/** X01a and X01g: the replay's time, at one pace. */
function replayTime(id: string, title: string, pace: Pace, paced: string): BenchWorkload {
  return {
    id,
    title,
    ...SEQUENTIAL,
    unit: "ms",
    better: "lower",
    scale: "long",
    timed: "Every transaction of the trace applied to a new document holding an empty text. " +
      `${paced}. Then waiting until all are committed (Cairn: \`db.flush()\` — every block ` +
      "appended, the log fsynced once, and any checkpoint the writing started in the background " +
      "written). Creating the document is outside the clock; the final text is checked against " +
      "the trace's after it (a difference fails the row).",
    fairness: `Every engine applies the same patches in the same transactions. ${ON_DISK}. Yjs ` +
      "computes each transaction's update (an update listener counts its bytes) and Automerge " +
      "each change's bytes, as apps persisting them do.",
    targets: TIME_TARGETS,
    text: side({
      requires: ["text", "storage"],
      setup: (ctx: TextCtx, variant) => sequential(ctx, variant, pace),
      async sample(s) {
        const replica = await s.ctx.engine().create({ onDisk: true });
        const start = now();
        await replay(replica, s.txns, s.pace);
        await replica.settle();
        const elapsed = now() - start;
        checkText(replica.text(), s.expected, s.label);
        await replica.close();
        return elapsed;
      },
    }),
  };
}

const sequentialTime = replayTime(
  "X01a.v1",
  "Trace replay, a commit each, in a burst (grouped into blocks)",
  "burst",
  BURST,
);
const typedTime = replayTime(
  "X01g.v1",
  "Trace replay, each written before the next",
  "written each",
  WRITTEN_EACH,
);

/** X01b and X01h: memory after the replay, at one pace. */
function replayMemory(id: string, title: string, pace: Pace, after: string): BenchWorkload {
  return {
    id,
    title,
    ...SEQUENTIAL,
    unit: "kB",
    better: "lower",
    scale: "memory",
    timed: "JS heap plus ArrayBuffer memory in use after a full GC with the replayed document " +
      `open (the database and its repository, the Y.Doc) after ${after}, minus the same before ` +
      "creating it.",
    fairness: `${ON_DISK}. Each engine holds what it needs to go on editing and merging (Cairn: ` +
      "the item and its history; Yjs: its item structs). Automerge's documents live in " +
      "WebAssembly memory, which these figures do not see: n/a.",
    targets: cairnTargets(10, "yjs"),
    text: side({
      requires: ["text", "storage"],
      setup(ctx: TextCtx, variant) {
        requireHeapVisible(ctx);
        return sequential(ctx, variant, pace);
      },
      async sample(s) {
        const before = await heap(s.ctx);
        const replica = await replayed(s);
        const after = await heap(s.ctx);
        await replica.close();
        return kB(after - before);
      },
    }),
  };
}

const sequentialMemory = replayMemory(
  "X01b.v1",
  "Memory after the replay",
  "burst",
  "X01a's replay",
);
const typedMemory = replayMemory(
  "X01h.v1",
  "Memory after the replay, each written",
  "written each",
  "X01g's replay (one block per transaction)",
);

const HISTORY = "Cairn: its log file on disk (every signed block, the one creating the document " +
  "included); Yjs: the bytes of every transaction's update; Automerge: the " +
  "bytes of every change (the document's creation included)";

const sequentialHistory: BenchWorkload = {
  id: "X01c.v1",
  title: "History on disk",
  ...SEQUENTIAL,
  unit: "kB",
  better: "lower",
  scale: "size",
  timed: `After the replay (X01a's), the history kept. ${HISTORY}.`,
  fairness: "Yjs and Automerge keep no log: their figure is what an app appending every update " +
    "(change) to storage would write. Cairn's log is its history and what peers exchange; " +
    "each block carries its session's public key (32 bytes) and, unless trusted, a signature " +
    "(64 bytes).",
  text: side({
    requires: ["text", "storage"],
    async setup(ctx: TextCtx, variant) {
      return await storedReplay(await sequential(ctx, variant, "burst"));
    },
    sample: (stored) => kB(stored.historyBytes),
  }),
};

/** X01d and X01i: the history per transaction, after the replay at one pace. */
function historyPerEdit(id: string, title: string, pace: Pace, after: string): BenchWorkload {
  return {
    id,
    title,
    ...SEQUENTIAL,
    unit: "B/edit",
    better: "lower",
    scale: "size",
    timed: `The history kept after ${after}, divided by the transactions replayed. ${HISTORY}.`,
    fairness: "As X01c: what one edit costs the history, signature and key included for Cairn " +
      "signed (one per block: blocks of many commits share theirs).",
    text: side({
      requires: ["text", "storage"],
      async setup(ctx: TextCtx, variant) {
        const s = await sequential(ctx, variant, pace);
        return { stored: await storedReplay(s), txns: s.txns.length };
      },
      sample: ({ stored, txns }) => stored.historyBytes / txns,
    }),
  };
}

const sequentialPerEdit = historyPerEdit(
  "X01d.v1",
  "History per transaction",
  "burst",
  "X01a's replay",
);
const typedPerEdit = historyPerEdit(
  "X01i.v1",
  "History per transaction, each written",
  "written each",
  "X01g's replay (one block per transaction)",
);

const SNAPSHOT = "Cairn: its checkpoint file (written on close; opening reads it instead of the " +
  "log); Yjs: the encoded document (`encodeStateAsUpdate`); Automerge: the saved document " +
  "(`save`)";

const sequentialSnapshot: BenchWorkload = {
  id: "X01e.v1",
  title: "Checkpoint or encoded doc",
  ...SEQUENTIAL,
  unit: "kB",
  better: "lower",
  scale: "size",
  timed: `After the replay (X01a's), what opening reads. ${SNAPSHOT}.`,
  fairness: "Each is the engine's compact form of the whole document, tombstones included, " +
    "from which it can go on editing and merging.",
  targets: cairnTargets(2, "yjs"),
  text: side({
    requires: ["text", "storage"],
    async setup(ctx: TextCtx, variant) {
      return await storedReplay(await sequential(ctx, variant, "burst"));
    },
    sample: (stored) => kB(stored.snapshotBytes),
  }),
};

const sequentialLoad: BenchWorkload = {
  id: "X01f.v1",
  title: "Load to the final text",
  ...SEQUENTIAL,
  unit: "ms",
  better: "lower",
  scale: "ms",
  timed: "From the stored document of X01c–e to its text as a string: Cairn: `Cairn.open({ path " +
    '})`, `db.open(repo)` (reads the checkpoint) and `item.get("body")`; Yjs: a new Y.Doc, ' +
    "`applyUpdate` of the encoded document, `toString()`; Automerge: `load` and reading the " +
    "text. Closing is outside the clock; the text is checked after it.",
  fairness: "Cairn reads files, Yjs and Automerge decode bytes already in memory.",
  targets: cairnTargets(100),
  text: side({
    requires: ["text", "storage"],
    async setup(ctx: TextCtx, variant) {
      const s = await sequential(ctx, variant, "burst");
      return { s, stored: await storedReplay(s) };
    },
    async sample({ s, stored }) {
      const start = now();
      const loaded = await stored.load();
      const elapsed = now() - start;
      checkText(loaded.text, s.expected, s.label);
      await loaded.close();
      return elapsed;
    },
  }),
};

// ── X02: the concurrent trace ───────────────────────────────────────────────────────────────

interface Concurrent {
  ctx: TextCtx;
  label: string;
  txns: readonly ConcurrentTxn[];
  plan: ReplayPlan;
  expected: string;
}

const references = new Map<number, Promise<string>>();

/**
 * The merged text of a trace: the file's for the whole trace. A prefix's is not in the file;
 * it is Yjs's (tested against the whole trace's): no two transactions of the trace insert
 * concurrently at one place, so every correct text CRDT agrees on it.
 */
function mergedText(trace: ConcurrentTrace, plan: ReplayPlan): Promise<string> {
  if (trace.endContent !== undefined) return Promise.resolve(trace.endContent);
  let text = references.get(trace.txns.length);
  if (!text) {
    text = runPlan(yjsEngine(), plan, concurrentIn(trace, "utf16")).then(async (replicas) => {
      const merged = replicas[plan.final].text();
      await Promise.all(replicas.map((r) => r.close()));
      return merged;
    });
    references.set(trace.txns.length, text);
  }
  return text;
}

async function concurrent(ctx: TextCtx, variant: Variant): Promise<Concurrent> {
  const trace = await loadTrace(TRACES.concurrent, ctx.readData) as ConcurrentTrace;
  const prefix = concurrentPrefix(trace, variant.txns as number);
  const plan = replayPlan(prefix.txns);
  return {
    ctx,
    label: variant.label,
    txns: concurrentIn(prefix, ctx.engine().units),
    plan,
    expected: await mergedText(prefix, plan),
  };
}

/** The trace replayed, its history summed over the replicas, and the merged document stored. */
function storedMerge(c: Concurrent): Promise<{ history: number; snapshot: number }> {
  return madeOnce(c.ctx, `X02 ${c.label}`, async () => {
    const replicas = await runPlan(c.ctx.engine(), c.plan, c.txns);
    checkText(replicas[c.plan.final].text(), c.expected, c.label);
    let history = 0;
    for (const replica of replicas) history += await replica.updateBytes();
    const stored = await replicas[c.plan.final].store();
    await Promise.all(replicas.filter((_, r) => r !== c.plan.final).map((r) => r.close()));
    return { history, snapshot: stored.snapshotBytes };
  });
}

const CONCURRENT = {
  ...TEXT_ROW,
  variants: traceVariants(TRACES.concurrent, QUICK_TXNS.concurrent),
} as const;

const REPLICAS = "One replica per branch of the trace (bench/lib/replay_plan.ts: 6 for the whole " +
  "trace, 5,863 exchanges): each transaction is applied on a replica holding exactly its " +
  "parents' merged history; where branches fork or merge, a replica takes in what another " +
  "holds and it lacks, as that engine's peers exchange it (Cairn: `exportBlocks(their version " +
  "vector)` then `importBlocks`, trusting the writer's key first unless trusted; Yjs: " +
  "`encodeStateAsUpdate(doc, their state vector)` then `applyUpdate`; Automerge: the changes " +
  "`merge` would take, then `applyChanges`)";

const concurrentTime: BenchWorkload = {
  id: "X02a.v1",
  title: "Replay, a replica per branch",
  ...CONCURRENT,
  unit: "ms",
  better: "lower",
  scale: "long",
  timed: `${REPLICAS}. Inside the clock: creating the replicas, every transaction (each its ` +
    "own, as in X01), every exchange, and waiting until all is committed. The merged text is " +
    "checked after it (the trace's for the whole trace; Yjs's for a prefix, whose merged text " +
    "the trace does not give).",
  fairness: "Every engine runs the same steps. All replicas are in memory. Cairn verifies each " +
    "block it imports (signature, chain, commits) unless trusted.",
  text: side({
    requires: ["text"],
    setup: concurrent,
    async sample(c) {
      const start = now();
      const replicas = await runPlan(c.ctx.engine(), c.plan, c.txns);
      const elapsed = now() - start;
      checkText(replicas[c.plan.final].text(), c.expected, c.label);
      await Promise.all(replicas.map((r) => r.close()));
      return elapsed;
    },
  }),
};

const concurrentHistory: BenchWorkload = {
  id: "X02b.v1",
  title: "History per transaction",
  ...CONCURRENT,
  unit: "B/edit",
  better: "lower",
  scale: "size",
  timed: "After X02a's replay, the bytes each replica's own transactions produced, summed over " +
    "the replicas and divided by the transactions: Cairn: its signed blocks (the document's " +
    "creation included); Yjs: every transaction's update; Automerge: every change.",
  fairness: "Each transaction's record counted once, where it was written.",
  text: side({
    requires: ["text", "storage"],
    async setup(ctx: TextCtx, variant) {
      const c = await concurrent(ctx, variant);
      return { made: await storedMerge(c), txns: c.txns.length };
    },
    sample: ({ made, txns }) => made.history / txns,
  }),
};

const concurrentSnapshot: BenchWorkload = {
  id: "X02c.v1",
  title: "Checkpoint or encoded doc",
  ...CONCURRENT,
  unit: "kB",
  better: "lower",
  scale: "size",
  timed: `After X02a's replay, the merged replica's compact form. ${SNAPSHOT}. Cairn's replica ` +
    "is in memory: its blocks are imported into a new database on disk, closed, and its " +
    "checkpoint measured.",
  fairness: "As X01e.",
  text: side({
    requires: ["text", "storage"],
    async setup(ctx: TextCtx, variant) {
      return await storedMerge(await concurrent(ctx, variant));
    },
    sample: (made) => kB(made.snapshot),
  }),
};

export const TEXT_TRACES: readonly BenchWorkload[] = [
  sequentialTime,
  sequentialMemory,
  sequentialHistory,
  sequentialPerEdit,
  sequentialSnapshot,
  sequentialLoad,
  typedTime,
  typedMemory,
  typedPerEdit,
  concurrentTime,
  concurrentHistory,
  concurrentSnapshot,
];
