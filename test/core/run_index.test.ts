import { test } from "node:test";
import assert from "node:assert/strict";
import { type IndexedRun, type RunGroup, RunIndex } from "../../src/core/text/run_index.ts";
import { seededRandom } from "../harness/random.ts";

interface Run extends IndexedRun {
  next: Run | null;
  visible: number;
  group: RunGroup | undefined;
  id: number;
}

test("RunIndex: precedes and indexOf follow the list, as runs are linked anywhere and groups are cut and numbered again (seeded)", () => {
  const seed = 20261129;
  const random = seededRandom(seed);
  const index = new RunIndex<Run>();
  const runs: Run[] = [];
  let head: Run | null = null;
  for (let id = 0; id < 6_000; id++) {
    const run: Run = { next: null, visible: 1 + (id % 3), group: undefined, id };
    // Mostly at one place near the start, which cuts the same groups again and again until no
    // order is left between two of them; sometimes anywhere.
    const after = runs.length === 0 || random() < 0.1
      ? null
      : random() < 0.7
      ? runs[Math.min(runs.length - 1, 3)]
      : runs[Math.floor(random() * runs.length)];
    if (after === null) {
      run.next = head;
      head = run;
    } else {
      run.next = after.next;
      after.next = run;
    }
    runs.push(run);
    index.linked(run, after);
  }
  const position = new Map<Run, number>();
  const before = new Map<Run, number>();
  let visible = 0;
  let at = 0;
  for (let run = head; run !== null; run = run.next) {
    position.set(run, at++);
    before.set(run, visible);
    visible += run.visible;
  }
  for (let i = 0; i < 20_000; i++) {
    const a = runs[Math.floor(random() * runs.length)];
    const b = runs[Math.floor(random() * runs.length)];
    if (a === b) continue;
    const where = `seed ${seed}, runs ${a.id} and ${b.id}`;
    assert.equal(index.precedes(a, b), position.get(a)! < position.get(b)!, where);
  }
  for (const run of runs) assert.equal(index.indexOf(run), before.get(run), `run ${run.id}`);
});
