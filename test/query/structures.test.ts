/**
 * The query layer's parts on their own: the chunked sorted list against a sorted array, an index
 * against a brute-force filter on random data (boundaries, missing fields, sets, deletes), and a
 * cold scan in slices (as on a browser page) that publishes no partial results.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { FieldRecord, WireValue } from "../../src/core/commit.ts";
import type { ItemChange } from "../../src/repo/change_listeners.ts";
import type { ItemValue } from "../../src/repo/leaf_merge.ts";
import { compileFilter } from "../../src/query/filter.ts";
import { QueryRegistry, type QuerySource } from "../../src/query/registry.ts";
import { FieldIndex } from "../../src/query/sorted_index.ts";
import { SortedList } from "../../src/query/sorted_list.ts";
import { seededRandom } from "../harness/random.ts";
import { chance, int, pick, type Random } from "./reference.ts";

test("the chunked sorted list matches a sorted array through random inserts and removals", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const rng = seededRandom(seed);
    const cmp = (a: { v: number }, b: { v: number }) => a.v - b.v;
    const list = new SortedList(cmp);
    const model: { v: number }[] = [];
    for (let step = 0; step < 3000; step++) {
      if (model.length > 0 && chance(rng, 0.4)) {
        const victim = model[int(rng, 0, model.length - 1)];
        const rank = list.remove(victim, true);
        assert.equal(rank, model.indexOf(victim), `seed ${seed}: removal rank`);
        model.splice(rank, 1);
      } else {
        const item = { v: rng() };
        const rank = list.insert(item, true);
        model.splice(rank, 0, item);
        assert.equal(model.every((x, i) => i === 0 || model[i - 1].v <= x.v), true);
      }
    }
    assert.deepEqual(list.toArray(), model, `seed ${seed}`);
    assert.equal(list.size, model.length);
    const cut = rng();
    assert.equal(list.rankWhere((x) => x.v < cut), model.filter((x) => x.v < cut).length);
  }
});

function randomWire(rng: Random): FieldRecord {
  const out: FieldRecord = {};
  if (chance(rng, 0.8)) {
    out.f = chance(rng, 0.7) ? int(rng, -3, 3) : pick(rng, ["", "a", "ab", "b", "ba"]);
  }
  if (chance(rng, 0.8)) out.s = ["x", "y", "z"].filter(() => chance(rng, 0.5));
  return out;
}

function randomFilter(rng: Random): Record<string, unknown> {
  const operand = (): WireValue =>
    chance(rng, 0.7) ? int(rng, -4, 4) : pick(rng, ["", "a", "b", "c"]);
  switch (int(rng, 0, 5)) {
    case 0:
      return { f: { eq: operand() } };
    case 1:
      return { f: { in: [operand(), operand()] } };
    case 2:
      return {
        f: { [pick(rng, ["gt", "gte"])]: operand(), [pick(rng, ["lt", "lte"])]: operand() },
      };
    case 3:
      return { f: { [pick(rng, ["gt", "gte", "lt", "lte"])]: operand() } };
    case 4:
      return { f: { prefix: pick(rng, ["", "a", "b", "ab"]) } };
    default:
      return { s: { has: pick(rng, ["x", "y", "w"]) } };
  }
}

test("index candidates, filtered, equal a full scan for random data and filters", () => {
  for (let seed = 1; seed <= 200; seed++) {
    const rng = seededRandom(seed);
    const items = new Map<string, ItemValue>();
    for (let i = 0; i < 40; i++) items.set(`k${i}`, { wire: randomWire(rng), schema: "t@1" });
    const field = chance(rng, 0.5) ? "f" : "s";
    const index = new FieldIndex(field, items);
    for (let step = 0; step < 30; step++) {
      const key = `k${int(rng, 0, 45)}`;
      const next = chance(rng, 0.2) ? undefined : randomWire(rng);
      items.set(key, { wire: next, schema: "t@1" });
      index.update(key, next);
      const filter = randomFilter(rng);
      const compiled = compileFilter(filter);
      const scan = [...items].filter(([, v]) => v.wire && compiled.test(v.wire)).map(([k]) => k);
      for (const term of compiled.terms) {
        if (term.field !== field) continue;
        const served = index.candidates(term)
          .filter((k) => compiled.test(items.get(k)!.wire!));
        assert.deepEqual(
          served.sort(),
          scan.sort(),
          `seed ${seed} step ${step} ${JSON.stringify(filter)}`,
        );
        assert.equal(new Set(served).size, served.length, "each candidate once");
      }
    }
  }
});

/** A repository stand-in: a map and change listeners. */
class FakeSource implements QuerySource {
  readonly map = new Map<string, ItemValue>();
  readonly listeners = new Set<(change: ItemChange) => void>();
  items() {
    return this.map;
  }
  value(key: string) {
    const v = this.map.get(key);
    return v?.wire === undefined ? undefined : v;
  }
  onChange(listener: (change: ItemChange) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  write(key: string, wire: FieldRecord | undefined) {
    this.map.set(key, { wire, schema: "t@1" });
    for (const l of this.listeners) l({ key, source: "local", deleted: wire === undefined });
  }
}

test("a cold scan in slices publishes nothing partial, sees writes made meanwhile, then resolves", async () => {
  const source = new FakeSource();
  for (let i = 0; i < 5000; i++) source.write(`k${String(i).padStart(5, "0")}`, { n: i % 100 });
  const registry = new QueryRegistry<string>(source, {
    view: (key) => key,
    convert: () => undefined,
  }, { sliceMs: 0 });
  const q = registry.query({ where: { n: { gte: 98 } } });
  assert.equal(q.pending, true);
  assert.deepEqual(q.results, [], "no partial results");
  let notified = 0;
  q.subscribe(() => notified++);
  source.write("k00000", { n: 99 }); // already scanned: applied to the pending members
  source.write("k04999", { n: 1 }); // not yet scanned
  source.write("new", { n: 98 });
  const results = await q.ready;
  assert.equal(q.pending, false);
  assert.equal(q.explain().mode, "sliced scan");
  const want = [...source.map].filter(([, v]) => (v.wire!.n as number) >= 98).map(([k]) => k)
    .sort();
  assert.deepEqual([...results], want);
  await Promise.resolve();
  assert.equal(notified, 1, "completion notifies once");
  source.write("k00001", { n: 100 });
  assert.equal(q.results.length, want.length + 1);
  registry.dispose();
  assert.ok(q.closed);
});
