/**
 * The update fast paths: an element re-placed in the sorted list only when its order changed
 * (`find` + `resettle`), index entries changed in place, and live-query members updated where
 * they are when their sort values did not change (or still fall between their neighbours).
 * Each is checked against a from-scratch answer, including ties broken by key and moves across
 * chunk boundaries.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { FieldRecord, WireValue } from "../../src/core/commit.ts";
import { compileFilter } from "../../src/query/filter.ts";
import { QueryRegistry } from "../../src/query/registry.ts";
import { AttachmentSlot } from "../../src/query/attachments.ts";
import { FieldIndex, type IndexedState } from "../../src/query/sorted_index.ts";
import { SortedList } from "../../src/query/sorted_list.ts";
import { compareKeys, compareWire } from "../../src/query/wire_order.ts";
import { seededRandom } from "../harness/random.ts";
import { FakeSource } from "./fake_source.ts";
import { chance, int, pick } from "./reference.ts";

interface Cell {
  v: number;
  readonly id: number;
}
const byValueThenId = (a: Cell, b: Cell) => a.v - b.v || a.id - b.id;

test("resettle keeps an element in place while it fits between its neighbours, else moves it", () => {
  for (let seed = 1; seed <= 10; seed++) {
    const rng = seededRandom(seed);
    // Few distinct values: many ties, decided by id, and enough elements for several chunks.
    const cells: Cell[] = Array.from({ length: 600 }, (_, id) => ({ v: int(rng, 0, 40), id }));
    const list = SortedList.from([...cells], byValueThenId);
    for (let step = 0; step < 800; step++) {
      const cell = pick(rng, cells);
      const before = list.toArray();
      const oldRank = before.indexOf(cell);
      assert.equal(list.find(cell), true);
      cell.v = chance(rng, 0.3) ? cell.v : int(rng, 0, 40);
      const rank = list.resettle(true);
      const after = list.toArray();
      const model = [...cells].sort(byValueThenId);
      assert.deepEqual(after, model, `seed ${seed} step ${step}: order`);
      const newRank = model.indexOf(cell);
      assert.equal(rank, Math.min(oldRank, newRank), `seed ${seed} step ${step}: rank`);
      if (newRank === oldRank) {
        for (let i = 0; i < after.length; i++) assert.equal(after[i], before[i]);
      }
    }
    assert.equal(list.size, cells.length);
    assert.equal(list.find({ v: 0, id: -1 }), false);
    assert.equal(list.remove({ v: 0, id: -1 }), -1);
  }
});

test("index entries changed in place (scalar ↔ scalar, ↔ set, ↔ missing) give a scan's candidates", () => {
  for (let seed = 1; seed <= 50; seed++) {
    const rng = seededRandom(seed);
    const items = new Map<string, IndexedState>();
    const valueOf = (): WireValue | undefined => {
      const r = rng();
      if (r < 0.55) return int(rng, -3, 3);
      if (r < 0.7) return pick(rng, ["a", "b", "ab"]);
      if (r < 0.85) return ["x", "y", "z"].filter(() => chance(rng, 0.5));
      return undefined;
    };
    const wireOf = (): FieldRecord => {
      const v = valueOf();
      return v === undefined ? {} : { f: v };
    };
    for (let i = 0; i < 300; i++) items.set(`k${i}`, { wire: wireOf() });
    const index = new FieldIndex("f", items, (owner) => new AttachmentSlot(owner, 0));
    for (let step = 0; step < 400; step++) {
      const key = `k${int(rng, 0, 320)}`;
      const wire = chance(rng, 0.1) ? undefined : wireOf();
      // A new state per change, carrying the entries kept with the last one, as in a repository.
      const state = { wire, attached: items.get(key)?.attached };
      items.set(key, state);
      index.update(key, state);
      if (step % 20 !== 0) continue;
      const operand = chance(rng, 0.7) ? int(rng, -3, 3) : pick(rng, ["a", "b"]);
      for (
        const filter of [
          { f: { eq: operand } },
          { f: { gte: operand } },
          { f: { lt: operand } },
          { f: { has: pick(rng, ["x", "y", "w"]) } },
        ]
      ) {
        const { test: matches, terms } = compileFilter(filter);
        const want = [...items].filter(([, s]) => s.wire !== undefined && matches(s.wire))
          .map(([k]) => k).sort();
        const got = index.candidates(terms[0]).filter((k) => matches(items.get(k)!.wire!)).sort();
        assert.deepEqual(got, want, `seed ${seed} step ${step}: ${JSON.stringify(filter)}`);
      }
    }
  }
});

interface View {
  readonly key: string;
}

function setup(count: number) {
  const source = new FakeSource();
  for (let i = 0; i < count; i++) source.write(`k${String(i).padStart(3, "0")}`, { n: i * 10 });
  let built = 0;
  const registry = new QueryRegistry<View>(source, {
    view: (key) => {
      built++;
      return { key };
    },
    convert: () => undefined,
  }, { sliceMs: null });
  return { source, registry, built: () => built };
}

const keysOf = (results: readonly View[]) => results.map((v) => v.key);

test("a member whose sort value changes within its neighbours stays put; across them it moves", () => {
  const { source, registry } = setup(5); // n: k000 0, k001 10, k002 20, k003 30, k004 40
  const q = registry.query({ sortBy: "n" });
  const first = q.results;
  const k002 = first[2];
  source.write("k002", { n: 25 }); // still between 10 and 30
  assert.deepEqual(keysOf(q.results), ["k000", "k001", "k002", "k003", "k004"]);
  assert.equal(q.results[2], k002, "the member keeps its result element");
  assert.notEqual(q.results, first, "a member's change is a new generation");
  source.write("k002", { n: 30 }); // ties with k003: the key decides (k002 < k003)
  assert.deepEqual(keysOf(q.results), ["k000", "k001", "k002", "k003", "k004"]);
  source.write("k003", { n: 20 }); // ties with k002 from the other side: k002 < k003 again
  assert.deepEqual(keysOf(q.results), ["k000", "k001", "k003", "k002", "k004"]);
  source.write("k000", { n: 35 }); // across two neighbours
  assert.deepEqual(keysOf(q.results), ["k001", "k003", "k002", "k000", "k004"]);
  source.write("k004", { n: -1 }); // from last to first
  assert.deepEqual(keysOf(q.results), ["k004", "k001", "k003", "k002", "k000"]);
  source.write("k001", { n: 10, other: 1 }); // sort value unchanged: in place
  assert.deepEqual(keysOf(q.results), ["k004", "k001", "k003", "k002", "k000"]);
  source.write("k001", { n: "ten" }); // another kind of value: strings sort after numbers
  assert.deepEqual(keysOf(q.results), ["k004", "k003", "k002", "k000", "k001"]);
  registry.dispose();
});

test("in-place updates match a from-scratch sort across chunks, with desc, limit and filters", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const rng = seededRandom(seed);
    const { source, registry } = setup(400);
    const desc = chance(rng, 0.5);
    const limit = chance(rng, 0.5) ? int(rng, 0, 50) : undefined;
    const sortBy = pick(rng, [undefined, "n", ["m", "n"]] as const);
    const where = chance(rng, 0.5) ? { n: { gte: 500 } } : undefined;
    const q = registry.query({ sortBy, desc, limit, where });
    const live = new Map<string, FieldRecord>();
    for (const [key, value] of source.map) live.set(key, value.wire!);
    for (let step = 0; step < 600; step++) {
      const key = `k${String(int(rng, 0, 420)).padStart(3, "0")}`;
      const old = live.get(key);
      const generation = q.generation;
      const wire: FieldRecord | undefined = chance(rng, 0.05) ? undefined : {
        n: old !== undefined && chance(rng, 0.3) ? old.n : int(rng, 0, 4000) - (step % 7),
        m: int(rng, 0, 3),
      };
      if (wire === undefined) live.delete(key);
      else live.set(key, wire);
      const visibleBefore = keysOf(q.results);
      source.write(key, wire);
      const fields = sortBy === undefined ? [] : typeof sortBy === "string" ? [sortBy] : sortBy;
      const want = [...live].filter(([, w]) => where === undefined || (w.n as number) >= 500)
        .sort(([ka, a], [kb, b]) => {
          for (const f of fields) {
            const c = compareWire(a[f], b[f]);
            if (c !== 0) return desc ? -c : c;
          }
          return desc ? -compareKeys(ka, kb) : compareKeys(ka, kb);
        })
        .map(([k]) => k).slice(0, limit ?? Infinity);
      assert.deepEqual(keysOf(q.results), want, `seed ${seed} step ${step}`);
      const visibleChange = visibleBefore.includes(key) || want.includes(key);
      if (!visibleChange) {
        assert.equal(q.generation, generation, `seed ${seed} step ${step}: beyond the window`);
      }
    }
    registry.dispose();
  }
});

test("a key-ordered member changes in place, keeps its element, and notifies once per batch", async () => {
  const { source, registry, built } = setup(300);
  const q = registry.query({ where: { n: { gte: 1000 } } });
  const before = q.results;
  const element = before[0];
  const madeBefore = built();
  let notified = 0;
  q.subscribe(() => notified++);
  for (let round = 0; round < 3; round++) {
    for (const result of before) {
      source.write(result.key, { n: 1000 + round + Number(result.key.slice(1)) });
    }
  }
  assert.deepEqual(keysOf(q.results), keysOf(before));
  assert.equal(q.results[0], element);
  assert.equal(built(), madeBefore, "no result element was rebuilt");
  source.write(before[0].key, { n: 1 }); // leaves
  source.write(before[0].key, { n: 5000 }); // comes back: a new member
  assert.deepEqual(keysOf(q.results), keysOf(before));
  await Promise.resolve();
  assert.equal(notified, 1);
  registry.dispose();
});

test("a tombstone cleared out of a query's member map is not taken up again through its state", () => {
  const { source, registry } = setup(20_000); // n = 10 i, k000 … k19999
  const q = registry.query({ where: { n: { lt: 1_000_000 } }, sortBy: "n" });
  const scan = () =>
    [...source.map].filter(([, s]) => s.wire !== undefined && (s.wire.n as number) < 1_000_000)
      .sort(([a, x], [b, y]) => (x.wire!.n as number) - (y.wire!.n as number) || (a < b ? -1 : 1))
      .map(([key]) => key);
  const key = (i: number) => `k${String(i).padStart(3, "0")}`;
  for (let i = 0; i < 19_000; i++) source.write(key(i), { n: 2_000_000 + i }); // out: cleared
  assert.deepEqual(keysOf(q.results), scan(), "most left");
  for (let i = 0; i < 10; i++) source.write(key(i), { n: i }); // back in
  assert.deepEqual(keysOf(q.results), scan(), "some came back");
  // The same items change again through states that lost what was kept with them: the query
  // must find them by key, as the members they are now.
  for (let i = 0; i < 10; i++) source.write(key(i), { n: 5 + i }, "t@1", false);
  for (let i = 10; i < 20; i++) source.write(key(i), { n: 100 + i }, "t@1", false);
  assert.deepEqual(keysOf(q.results), scan(), "changed again, found by key");
  registry.dispose();
});
