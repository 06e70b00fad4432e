/**
 * The query layer's parts on their own: the chunked sorted list against a sorted array, index
 * plans (single lookups and `or` unions over several indexes) against a brute-force filter on
 * random data (boundaries, missing fields, sets, deletes, nested and/or), and a cold scan in
 * slices (as on a browser page) that publishes no partial results.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { FieldRecord, WireValue } from "../../src/core/commit.ts";
import type { ItemValue } from "../../src/core/item_state.ts";
import { compileFilter } from "../../src/query/filter.ts";
import { candidateKeys, planAccess } from "../../src/query/planner.ts";
import { QueryRegistry } from "../../src/query/registry.ts";
import { AttachmentSlot, AttachmentSlots } from "../../src/query/attachments.ts";
import { FieldIndex, ONE_PASS_SHARE } from "../../src/query/sorted_index.ts";
import { SortedList } from "../../src/query/sorted_list.ts";
import { seededRandom } from "../harness/random.ts";
import { FakeSource } from "./fake_source.ts";
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

test("replacing a batch in one pass gives the list the removals and inserts one by one give", () => {
  for (let seed = 1; seed <= 40; seed++) {
    const rng = seededRandom(seed);
    const cmp = (a: { v: number }, b: { v: number }) => a.v - b.v;
    const make = () => ({ v: rng() });
    const start = Array.from({ length: int(rng, 0, 1500) }, make);
    const list = SortedList.from([...start], cmp);
    // Drops clustered or scattered, inserts clustered at one end or spread: both kinds of chunk.
    const clustered = chance(rng, 0.5);
    const cut = rng();
    const dropped = new Set(
      start.filter((x) => clustered ? x.v < cut * 0.3 : chance(rng, 0.1)),
    );
    const added = Array.from(
      { length: int(rng, 0, 600) },
      () => clustered ? { v: 1 + rng() } : make(),
    ).sort(cmp);
    // Told where the drops are (found before their values change, as an index does), or not.
    const dropsIn = chance(rng, 0.5) ? list.chunksOf([...dropped]) : undefined;
    if (dropsIn !== undefined) { for (const x of dropped) x.v += 2; // no longer findable by order
     }
    list.replace((x) => dropped.has(x), added, dropsIn);
    const model = [...start.filter((x) => !dropped.has(x)), ...added].sort(cmp);
    assert.deepEqual(list.toArray(), model, `seed ${seed}`);
    assert.equal(list.size, model.length);
    // Still a working list afterwards.
    const late = make();
    model.splice(list.insert(late, true), 0, late);
    assert.deepEqual(list.toArray(), model, `seed ${seed}: insert after replace`);
    if (model.length > 0) {
      const victim = model[int(rng, 0, model.length - 1)];
      model.splice(list.remove(victim, true), 1);
      assert.deepEqual(list.toArray(), model, `seed ${seed}: remove after replace`);
    }
  }
});

test("an index given changes in batches of any size answers as one built from the items", () => {
  let onePass = 0;
  let oneByOne = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const rng = seededRandom(seed);
    const items = new Map<string, ItemValue>();
    // Some indexes span many chunks, so a one-pass batch keeps some chunks and rebuilds others.
    const count = seed % 2 === 0 ? int(rng, 1000, 3000) : int(rng, 20, 400);
    for (let i = 0; i < count; i++) items.set(`k${i}`, { wire: randomWire(rng), schema: "t@1" });
    // Entries kept with the item states too, as in a repository: each new state carries the
    // records of the last one, except now and then (a state that never had them, as after a
    // restore), when the index must look the key up again.
    const slots = new AttachmentSlots();
    const indexes = ["f", "g", "s"].map((field) =>
      new FieldIndex(field, items, (owner) => new AttachmentSlot(owner, slots.take()))
    );
    for (let round = 0; round < 8; round++) {
      // A batch is a tick's changes: from one to more than the index holds.
      const batch = int(rng, 1, chance(rng, 0.5) ? 3 : count + 20);
      if (batch < count * ONE_PASS_SHARE) oneByOne++;
      else onePass++;
      for (let n = 0; n < batch; n++) {
        const key = `k${int(rng, 0, count + 10)}`;
        const next = chance(rng, 0.15) ? undefined : randomWire(rng);
        const attached = chance(rng, 0.9) ? items.get(key)?.attached : undefined;
        const state = { wire: next, schema: "t@1", attached };
        items.set(key, state);
        for (const index of indexes) index.update(key, state);
      }
      const fresh = ["f", "g", "s"].map((field) => new FieldIndex(field, items));
      for (let q = 0; q < 6; q++) {
        const filter = randomFilter(rng, 0);
        for (const term of compileFilter(filter).terms) {
          const i = ["f", "g", "s"].indexOf(term.field);
          const where = `seed ${seed} round ${round} ${JSON.stringify(filter)}`;
          // Same candidates in the same order: the entries are where a fresh build puts them.
          assert.deepEqual(indexes[i].candidates(term), fresh[i].candidates(term), where);
          assert.equal(indexes[i].estimate(term), fresh[i].estimate(term), where);
        }
      }
      indexes.forEach((index, i) => assert.equal(index.size, fresh[i].size));
    }
  }
  assert.ok(onePass > 50 && oneByOne > 50, `${onePass} one-pass and ${oneByOne} one-by-one`);
});

function randomWire(rng: Random): FieldRecord {
  const out: FieldRecord = {};
  if (chance(rng, 0.8)) {
    out.f = chance(rng, 0.7) ? int(rng, -3, 3) : pick(rng, ["", "a", "ab", "b", "ba"]);
  }
  if (chance(rng, 0.7)) out.g = int(rng, 0, 5);
  if (chance(rng, 0.8)) out.s = ["x", "y", "z"].filter(() => chance(rng, 0.5));
  return out;
}

/** A condition on `f` or `g` (scalars) or `s` (a set), operands on and beyond the data's edges. */
function randomCondition(rng: Random, field: string): unknown {
  if (field === "s") return { has: pick(rng, ["x", "y", "w"]) };
  const operand = (): WireValue =>
    chance(rng, 0.7) ? int(rng, -4, 6) : pick(rng, ["", "a", "b", "c"]);
  switch (int(rng, 0, 5)) {
    case 0:
      return { eq: operand() };
    case 1:
      return { in: [operand(), operand()] };
    case 2:
      return { [pick(rng, ["gt", "gte"])]: operand(), [pick(rng, ["lt", "lte"])]: operand() };
    case 3:
      return { [pick(rng, ["gt", "gte", "lt", "lte"])]: operand() };
    case 4:
      return { prefix: pick(rng, ["", "a", "b", "ab"]) };
    default:
      return { ne: operand() }; // no index serves it: a branch with only this forces a scan
  }
}

/** A filter of up to two field conditions, with nested `or` / `and` groups up to `depth`. */
function randomFilter(rng: Random, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let n = int(rng, depth > 0 ? 0 : 1, 2); n > 0; n--) {
    const field = pick(rng, ["f", "g", "s"]);
    out[field] = randomCondition(rng, field);
  }
  if (depth > 0 && chance(rng, 0.6)) {
    out.or = Array.from({ length: int(rng, 1, 3) }, () => randomFilter(rng, depth - 1));
  }
  if (depth > 0 && chance(rng, 0.2)) out.and = [randomFilter(rng, depth - 1)];
  return out;
}

test("index plans (one lookup, or the union of an or's lookups) give a scan's matches", () => {
  const served = { single: 0, union: 0, scan: 0 };
  for (let seed = 1; seed <= 200; seed++) {
    const rng = seededRandom(seed);
    const items = new Map<string, ItemValue>();
    for (let i = 0; i < 40; i++) items.set(`k${i}`, { wire: randomWire(rng), schema: "t@1" });
    const indexes = new Map<string, FieldIndex>();
    for (const field of ["f", "g", "s"]) {
      if (chance(rng, 0.7)) indexes.set(field, new FieldIndex(field, items));
    }
    for (let step = 0; step < 30; step++) {
      const key = `k${int(rng, 0, 45)}`;
      const next = chance(rng, 0.2) ? undefined : randomWire(rng);
      const state = { wire: next, schema: "t@1" };
      items.set(key, state);
      for (const index of indexes.values()) index.update(key, state);
      const filter = randomFilter(rng, 2);
      const where = `seed ${seed} step ${step} ${JSON.stringify(filter)}`;
      const compiled = compileFilter(filter);
      const scan = [...items].filter(([, v]) => v.wire && compiled.test(v.wire)).map(([k]) => k)
        .sort();
      const matching = (keys: Iterable<string>) =>
        [...keys].filter((k) => compiled.test(items.get(k)!.wire!)).sort();
      // Every ANDed term alone yields a superset of the matches.
      for (const term of compiled.terms) {
        const index = indexes.get(term.field);
        if (!index) continue;
        const keys = index.candidates(term);
        assert.equal(new Set(keys).size, keys.length, `${where}: each candidate once`);
        assert.deepEqual(matching(keys), scan, `${where}: term on ${term.field}`);
      }
      const plan = planAccess(compiled, (field) => indexes.get(field));
      if (plan === undefined) {
        served.scan++;
        continue;
      }
      served[plan.lookups.length === 1 ? "single" : "union"]++;
      const keys = [...candidateKeys(plan)];
      assert.equal(new Set(keys).size, keys.length, `${where}: each candidate once`);
      assert.ok(keys.length <= plan.estimate, `${where}: the estimate bounds the candidates`);
      assert.deepEqual(matching(keys), scan, `${where}: plan ${JSON.stringify(plan.lookups)}`);
    }
  }
  for (const [kind, count] of Object.entries(served)) {
    assert.ok(count > 300, `only ${count} filters were served by ${kind}`);
  }
});

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
