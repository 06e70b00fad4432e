/**
 * X03–X05: text rows modelled on dmonad/crdt-benchmarks, whose published table is the usual
 * reference for Yjs and Automerge: B1 (one user), B2 (two users at once), B3 (many users), at the
 * published N = 6,000. Each has a time row and an update-size row. The edits come from
 * bench/lib/crdt_inputs.ts; what differs from the published harness is said in each row.
 */
import type { TextCtx } from "../contenders/text.ts";
import { checkText, replay, sync, type TextReplica } from "../contenders/text_engine.ts";
import {
  manyUsers,
  ONE_USER_CASES,
  oneUser,
  type OneUserCase,
  PUBLISHED_N,
  sharedStart,
  TWO_USER_CASES,
  type TwoUserCase,
  twoUsers,
} from "../lib/crdt_inputs.ts";
import { now } from "../lib/timer.ts";
import { side, type Variant } from "../lib/types.ts";
import type { BenchWorkload } from "./common.ts";
import { madeOnce, TEXT_ROW } from "./text_common.ts";

/** N in quick mode: small enough for the smoke test. */
const QUICK_N = 50;

function sizeOf(quick: boolean): { n: number; note: string } {
  return quick
    ? { n: QUICK_N, note: ` (published: ${PUBLISHED_N.toLocaleString("en-US")})` }
    : { n: PUBLISHED_N, note: "" };
}

/** Where the published figures come from. */
const SOURCE = "the table in the README of github.com/dmonad/crdt-benchmarks (commit 12b4e90: " +
  "yjs 13.5.12 and automerge-wasm 0.1.3 on Node 12, an Intel i5-8400), N = 6,000";

const PER_EDIT = "the bytes of the updates the timed edits produced (Cairn: its signed blocks as " +
  "exported; Yjs: each transaction's update; Automerge: each change), divided by the edits";

// ── X03: B1, one user ───────────────────────────────────────────────────────────────────────

function oneUserVariants(quick: boolean): Variant[] {
  const { n, note } = sizeOf(quick);
  return (Object.keys(ONE_USER_CASES) as OneUserCase[]).map((which) => ({
    label: `${which} ${ONE_USER_CASES[which]}, N = ${n.toLocaleString("en-US")}${note}`,
    items: 0,
    which,
    n,
  }));
}

function oneUserSetup(ctx: TextCtx, variant: Variant) {
  const script = oneUser(variant.which as OneUserCase, variant.n as number);
  return { ctx, label: variant.label, txns: script.patches.map((p) => [p]), expected: script.text };
}

type OneUser = ReturnType<typeof oneUserSetup>;

/**
 * A new document, then B1's edits, each its own transaction, written before the next (Cairn:
 * a block each, as Yjs and Automerge produce an update each); timed from the first edit.
 */
async function oneUserRun(s: OneUser) {
  const replica = await s.ctx.engine().create();
  const before = await replica.updateBytes();
  const start = now();
  await replay(replica, s.txns, "written each");
  await replica.settle();
  const ms = now() - start;
  checkText(replica.text(), s.expected, s.label);
  const bytes = (await replica.updateBytes()) - before;
  await replica.close();
  return { ms, bytes };
}

const B1_TIMED = "On a new document holding an empty text (created outside the clock), each " +
  "edit as its own transaction, which waits until the previous one is written (Cairn: " +
  "`repo.flush()` after each edit, so each edit is its own commit and its own block, sealed and, " +
  "unless trusted, signed before the next edit; Yjs and Automerge have their update at once and " +
  "wait for nothing), then waiting until all are committed. The text is checked after the clock " +
  "against the one the edits leave.";

const B1_FAIRNESS = "As published, each edit is its own update: one Yjs update, one Automerge " +
  "change, one Cairn block per edit (until 2026-11-29, X03a.v1 and X03b.v1 replayed the edits " +
  "in a burst, which Cairn sealed about 11 to a block). What differs: each Cairn block is " +
  "signed (Ed25519) unless trusted and hash-chained; the published harness times the edits " +
  "with an update handler keeping each update, ours counts its bytes. All in memory.";

const oneUserTime: BenchWorkload = {
  id: "X03a.v2",
  title: "B1, one user, a block per edit: time",
  ...TEXT_ROW,
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: oneUserVariants,
  timed: B1_TIMED,
  fairness: B1_FAIRNESS,
  context: `Published (${SOURCE}), time, Yjs / Automerge: B1.1 179 / 164 ms, B1.4 169 / 539 ms, ` +
    "B1.7 203 / 1,228 ms.",
  text: side({
    requires: ["text"],
    setup: oneUserSetup,
    sample: async (s) => (await oneUserRun(s)).ms,
  }),
};

const oneUserSize: BenchWorkload = {
  id: "X03b.v2",
  title: "B1, one user, a block per edit: update size",
  ...TEXT_ROW,
  unit: "B/edit",
  better: "lower",
  scale: "size",
  variants: oneUserVariants,
  timed: `X03a's run, then ${PER_EDIT}.`,
  fairness: "The published avgUpdateSize, per edit. Each Cairn block carries its session's " +
    "public key (32 bytes) and, unless trusted, a signature (64 bytes).",
  context: `Published (${SOURCE}), avgUpdateSize, Yjs / Automerge: B1.1 27 / 121 bytes, ` +
    "B1.4 29 / 121 bytes, B1.7 31 / 135 bytes.",
  text: side({
    requires: ["text"],
    setup: oneUserSetup,
    async sample(s) {
      const { bytes } = await oneUserRun(s);
      return bytes / s.txns.length;
    },
  }),
};

// ── X04: B2, two users at once ──────────────────────────────────────────────────────────────

function twoUserVariants(quick: boolean): Variant[] {
  const { n, note } = sizeOf(quick);
  return (Object.keys(TWO_USER_CASES) as TwoUserCase[]).map((which) => ({
    label: `${which} ${TWO_USER_CASES[which]}, N = ${n.toLocaleString("en-US")}${note}`,
    items: 0,
    which,
    n,
  }));
}

function twoUserSetup(ctx: TextCtx, variant: Variant) {
  const which = variant.which as TwoUserCase;
  const n = variant.n as number;
  const start = sharedStart();
  return {
    ctx,
    which,
    n,
    label: variant.label,
    start,
    first: twoUsers(which, n, start, 3),
    second: twoUsers(which, n, start, 4),
  };
}

type TwoUsers = ReturnType<typeof twoUserSetup>;

/**
 * Two replicas synced on the shared start (outside the clock); then each user's edits as one
 * transaction, and each replica takes in the other's, timed.
 */
async function twoUserRun(s: TwoUsers) {
  const engine = s.ctx.engine();
  const a = await engine.create();
  a.edit([[0, 0, s.start]]);
  await a.settle();
  const b = await engine.join();
  await sync(a, b);
  const before = (await a.updateBytes()) + (await b.updateBytes());
  const start = now();
  a.edit(s.first);
  b.edit(s.second);
  await sync(a, b);
  await sync(b, a);
  await Promise.all([a.settle(), b.settle()]);
  const ms = now() - start;
  checkText(b.text(), a.text(), `${s.label}: the two replicas`);
  if (s.which === "B2.2" && a.text().length !== 2 * s.n + s.start.length) {
    throw new Error(`${s.label}: ${a.text().length} characters, not ${2 * s.n + s.start.length}`);
  }
  const bytes = (await a.updateBytes()) + (await b.updateBytes()) - before;
  await Promise.all([a.close(), b.close()]);
  return { ms, bytes, edits: s.first.length + s.second.length };
}

const twoUserTime: BenchWorkload = {
  id: "X04a.v1",
  title: "B2, two users: time",
  ...TEXT_ROW,
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: twoUserVariants,
  timed: "Two replicas start synced on the same 100 characters (outside the clock). Timed: " +
    "each user's edits as one transaction on its replica (Cairn: one block each), then each " +
    "replica takes in the other's (as in X02), until both are committed. Afterwards both " +
    "texts must be equal (and, for B2.2, 2N + 100 characters long).",
  fairness: "Truly concurrent here: both users edit before either takes in the other's edits. " +
    "The published harness passes the first user's update to the second before the second " +
    "edits, so its B2 times a sequence; the two figures are not the same measure. All in memory.",
  context: `Published (${SOURCE}), time, Yjs / Automerge: B2.2 105 / 1,863 ms, ` +
    "B2.4 319 / 8,107 ms.",
  text: side({
    requires: ["text"],
    setup: twoUserSetup,
    sample: async (s) => (await twoUserRun(s)).ms,
  }),
};

const twoUserSize: BenchWorkload = {
  id: "X04b.v1",
  title: "B2, two users: update size",
  ...TEXT_ROW,
  unit: "B/edit",
  better: "lower",
  scale: "size",
  variants: twoUserVariants,
  timed: `X04a's run, then ${PER_EDIT} of both users.`,
  fairness: "Per edit, where the published updateSize is per user (half of both updates): " +
    "multiply ours by N (B2.2) or 2N (B2.4) to compare.",
  context: `Published (${SOURCE}), updateSize, Yjs / Automerge: B2.2 33,444 / 1,093,293 bytes, ` +
    "B2.4 139,517 / 2,395,876 bytes.",
  text: side({
    requires: ["text"],
    setup: twoUserSetup,
    async sample(s) {
      const { bytes, edits } = await twoUserRun(s);
      return bytes / edits;
    },
  }),
};

// ── X05: B3, many users ─────────────────────────────────────────────────────────────────────

function manyUserVariants(quick: boolean): Variant[] {
  const { n, note } = sizeOf(quick);
  const users = manyUsers(n);
  return [{
    label: `20√N = ${users.toLocaleString("en-US")} users each insert their number at the ` +
      `start, N = ${n.toLocaleString("en-US")}${note}`,
    items: 0,
    users,
  }];
}

/** Every user's edit as the messages a new replica takes in, and who wrote them. */
interface ManyUsers {
  users: number;
  base: Uint8Array[];
  edits: Uint8Array[];
  peers: string[];
  expected: string;
}

/**
 * A document created by one replica; each user joins it, inserts its number at the start, and
 * hands over what it wrote. Made once per contender and size (1,540 Cairn databases take
 * seconds to open), outside every clock.
 */
function manyUsersMade(ctx: TextCtx, variant: Variant): Promise<ManyUsers> {
  return madeOnce(ctx, `X05 ${variant.label}`, async () => {
    const engine = ctx.engine();
    const origin = await engine.create();
    const empty = await engine.join();
    const users = variant.users as number;
    const made: ManyUsers = {
      users,
      base: await origin.diff(empty),
      edits: [],
      peers: [...origin.peers()],
      expected: "",
    };
    await empty.close();
    for (let user = 0; user < users; user++) {
      const replica = await engine.join();
      await sync(origin, replica);
      replica.edit([[0, 0, String(user)]]);
      await replica.settle();
      made.edits.push(...await replica.diff(origin));
      made.peers.push(replica.peer);
      made.expected += String(user);
      await replica.close();
    }
    await origin.close();
    return made;
  });
}

/** A new replica holding the created document and accepting every user (outside the clock). */
async function receiver(ctx: TextCtx, made: ManyUsers): Promise<TextReplica> {
  const replica = await ctx.engine().join();
  await replica.accept(made.peers);
  await replica.apply(made.base);
  return replica;
}

/** The order of concurrent inserts at one place is each engine's; the characters are not. */
function checkSameCharacters(text: string, expected: string, what: string): void {
  const sorted = (s: string) => [...s].sort().join("");
  checkText(sorted(text), sorted(expected), `${what} (characters, sorted)`);
}

const manyUserTime: BenchWorkload = {
  id: "X05a.v1",
  title: "B3, many users: time",
  ...TEXT_ROW,
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: manyUserVariants,
  timed: "20√N users (1,540 for N = 6,000) each joined a document created by another replica " +
    "and inserted their number at its start, concurrently (outside the clock, once). Timed: a " +
    "new replica holding the created document takes in all their edits at once (one Yjs " +
    "transaction; Cairn verifies each user's block unless trusted). The text's characters are " +
    "checked afterwards.",
  fairness: "The published B3.4 inserts into an array, this row into text; and there the " +
    "receiving replica is one of the users, here a replica of its own. All in memory.",
  context: `Published (${SOURCE}), B3.4 (20√N clients concurrently insert text in an Array), ` +
    "time, Yjs / Automerge: 78 / 46 ms.",
  text: side({
    requires: ["text"],
    async setup(ctx: TextCtx, variant) {
      return { ctx, label: variant.label, made: await manyUsersMade(ctx, variant) };
    },
    async sample({ ctx, label, made }) {
      const replica = await receiver(ctx, made);
      const start = now();
      await replica.apply(made.edits);
      await replica.settle();
      const elapsed = now() - start;
      checkSameCharacters(replica.text(), made.expected, label);
      await replica.close();
      return elapsed;
    },
  }),
};

const manyUserSize: BenchWorkload = {
  id: "X05b.v1",
  title: "B3, many users: update size",
  ...TEXT_ROW,
  unit: "B/edit",
  better: "lower",
  scale: "size",
  variants: manyUserVariants,
  timed: "The bytes of every user's edit as handed over in X05a (Cairn: its signed block; Yjs: " +
    "its update; Automerge: its change), divided by the users.",
  fairness: "Per user, where the published updateSize is the total: multiply ours by the users " +
    "to compare.",
  context: `Published (${SOURCE}), B3.4 updateSize, Yjs / Automerge: 52,749 / 285,330 bytes.`,
  text: side({
    requires: ["text"],
    async setup(ctx: TextCtx, variant) {
      return await manyUsersMade(ctx, variant);
    },
    sample: (made) => made.edits.reduce((sum, m) => sum + m.byteLength, 0) / made.users,
  }),
};

export const TEXT_PUBLISHED: readonly BenchWorkload[] = [
  oneUserTime,
  oneUserSize,
  twoUserTime,
  twoUserSize,
  manyUserTime,
  manyUserSize,
];
