import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mergeText, type TextEdit, textEdits } from "../../../src/core/merge/text.ts";
import type { MergeSide } from "../../../src/core/merge/types.ts";
import { seededRandom } from "../../harness/random.ts";
import {
  ascendingStamps,
  at,
  copiesMergeOnce,
  noChangeGivesBase,
  orderDoesNotMatter,
  RUNS,
  shuffled,
  sides,
  stamp,
} from "../../harness/stamps.ts";

/**
 * Code points from a small alphabet, so edits collide often. 😀 😁 😂 share their first UTF-16
 * unit: a diff over code units would split them.
 */
const alphabet = ["a", "b", "c", " ", "é", "😀", "😁", "😂"];
const text = (maxLength: number, letters = alphabet) =>
  fc.array(fc.constantFrom(...letters), { maxLength }).map((points) => points.join(""));

interface Change {
  at: number;
  remove: number;
  insert: string;
}

/** Applies a few deletions and insertions, at code-point positions, to `base`. */
function edited(base: string, changes: readonly Change[]): string {
  const points = [...base];
  for (const { at, remove, insert } of changes) {
    points.splice(at % (points.length + 1), remove, ...insert);
  }
  return points.join("");
}

const change = (letters = alphabet, { inserts = true, deletes = true } = {}) =>
  fc.record({
    at: fc.nat(40),
    remove: deletes ? fc.nat(3) : fc.constant(0),
    insert: inserts ? text(3, letters) : fc.constant(""),
  }, { noNullPrototype: true });

/**
 * A base text and sides that each made a few edits to it; sides that may both insert and
 * delete may also remove the field.
 */
function baseAndSides(options = { inserts: true, deletes: true }) {
  return fc.option(text(12), { nil: undefined }).chain((base) => {
    const edit = fc.array(change(alphabet, options), { maxLength: 3 })
      .map((changes) => edited(base ?? "", changes));
    const value = options.inserts && options.deletes
      ? fc.option(edit, { nil: undefined, freq: 10 })
      : edit;
    return fc.tuple(fc.constant(base), sides(value, { minLength: 1 }));
  });
}

const maybeText = fc.option(text(8), { nil: undefined });

function isSubsequence(small: readonly string[], large: readonly string[]): boolean {
  let i = 0;
  for (const point of large) if (i < small.length && point === small[i]) i++;
  return i === small.length;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function applyEdits(base: string, edits: readonly TextEdit[]): string {
  let result = "";
  let next = 0;
  for (const { start, end, text } of edits) {
    result += base.slice(next, start) + text;
    next = end;
  }
  return result + base.slice(next);
}

function longestCommonSubsequence(a: readonly string[], b: readonly string[]): number {
  let row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const next = [0];
    for (let j = 0; j < b.length; j++) {
      next.push(x === b[j] ? row[j] + 1 : Math.max(row[j + 1], next[j]));
    }
    row = next;
  }
  return row[b.length];
}

const merge = (base: string | undefined, ...values: string[]) =>
  mergeText(base, values.map((value, i) => ({ value, stamp: at(i + 1) })));

// --- the laws ---

test("text: the order of the sides does not matter", () => {
  fc.assert(orderDoesNotMatter(mergeText, maybeText, maybeText), RUNS);
  fc.assert(
    fc.property(
      baseAndSides().chain(([base, list]) => fc.tuple(fc.constant(base), shuffled(list))),
      ([base, [list, reordered]]) => {
        assert.equal(mergeText(base, reordered), mergeText(base, list));
      },
    ),
    RUNS,
  );
});

test("text: a side merged with a copy of itself counts once", () => {
  fc.assert(copiesMergeOnce(mergeText, maybeText, maybeText), RUNS);
});

test("text: with no change the base stays", () => {
  fc.assert(noChangeGivesBase(mergeText, maybeText), RUNS);
});

test("text: grouping does not matter for edits to separate stretches", () => {
  // Not associative in general (see the example below); it holds when the sides edit
  // stretches kept apart by text nobody touched, and the group is two neighbouring stretches.
  // The separators share no character with each other or with the letters, and are longer than
  // all of a stretch's edits together: a diff may otherwise delete a separator and insert it
  // again elsewhere, an alignment as short as the intended one, and the stretches are no longer
  // kept apart (with "|" twice, seed -1982518680 found it).
  const [open, close] = ["{ABCDEFGH}", "[IJKLMNOP]"];
  const stretch = text(6);
  const edits = fc.array(change(), { maxLength: 2 });
  fc.assert(
    fc.property(
      fc.tuple(stretch, stretch, stretch),
      fc.tuple(edits, edits, edits),
      ascendingStamps(3),
      fc.boolean(),
      ([l, m, r], [el, em, er], stamps, groupLeft) => {
        const base = `${l}${open}${m}${close}${r}`;
        const [l2, m2, r2] = [edited(l, el), edited(m, em), edited(r, er)];
        const sidesList = [
          `${l2}${open}${m}${close}${r}`,
          `${l}${open}${m2}${close}${r}`,
          `${l}${open}${m}${close}${r2}`,
        ]
          .map((value, i) => ({ value, stamp: stamps[i] }));
        const [first, second, alone] = groupLeft
          ? [sidesList[0], sidesList[1], sidesList[2]]
          : [sidesList[1], sidesList[2], sidesList[0]];
        const pair = { value: mergeText(base, [first, second]), stamp: stamps[2] };
        const expected = `${l2}${open}${m2}${close}${r2}`;
        assert.equal(mergeText(base, sidesList), expected);
        assert.equal(mergeText(base, [pair, alone]), expected);
      },
    ),
    RUNS,
  );
});

test("text: grouping can matter when edits meet at the same place", () => {
  // a and c insert at the same gap, b (latest) elsewhere. At once, a's and c's insertions are
  // ordered by their own stamps; merged first, a's insertion carries b's later stamp.
  const base = "xy";
  const a = { value: "xAy", stamp: at(1) };
  const b = { value: "xy!", stamp: at(3) };
  const c = { value: "xCy", stamp: at(2) };
  const pair = { value: mergeText(base, [a, b]), stamp: at(3) };
  assert.equal(mergeText(base, [a, b, c]), "xACy!");
  assert.equal(mergeText(base, [pair, c]), "xCAy!");
});

// --- what the merge keeps ---

test("text: when sides only insert, nobody's typing is lost", () => {
  fc.assert(
    fc.property(baseAndSides({ inserts: true, deletes: false }), ([base, list]) => {
      const merged = [...(mergeText(base, list) ?? "")];
      for (const s of list) assert.ok(isSubsequence([...(s.value ?? "")], merged));
    }),
    RUNS,
  );
});

test("text: when sides only delete, whatever one side deleted is gone", () => {
  fc.assert(
    fc.property(baseAndSides({ inserts: false, deletes: true }), ([base, list]) => {
      const merged = [...(mergeText(base, list) ?? "")];
      for (const s of list) assert.ok(isSubsequence(merged, [...(s.value ?? "")]));
    }),
    RUNS,
  );
});

test("text: a surrogate pair is never split", () => {
  fc.assert(
    fc.property(baseAndSides(), ([base, list]) => {
      assert.ok(!LONE_SURROGATE.test(mergeText(base, list) ?? ""));
    }),
    RUNS,
  );
});

test("text: the diff turns base into the side with fewest edits, on code point boundaries", () => {
  fc.assert(
    fc.property(text(14), fc.array(change(), { maxLength: 4 }), (base, cs) => {
      const side = edited(base, cs);
      const edits = textEdits(base, side);
      assert.equal(applyEdits(base, edits), side);
      const cost = edits.reduce(
        (sum, e) => sum + [...base.slice(e.start, e.end)].length + [...e.text].length,
        0,
      );
      const [a, b] = [[...base], [...side]];
      assert.equal(cost, a.length + b.length - 2 * longestCommonSubsequence(a, b));
      edits.forEach((e, i) => assert.ok(i === 0 || e.start > edits[i - 1].end, "apart"));
      for (const e of edits) {
        assert.ok(!LONE_SURROGATE.test(base.slice(e.start, e.end)));
        assert.ok(!LONE_SURROGATE.test(e.text));
      }
    }),
    RUNS,
  );
});

// --- examples ---

test("text: edits in different places both apply", () => {
  assert.equal(merge("hello world", "hello brave world", "hello world!"), "hello brave world!");
});

test("text: concurrent deletes of the same or overlapping text delete it once", () => {
  assert.equal(merge("one two three four", "one four", "one three four"), "one four");
  assert.equal(merge("one two three four", "one four", "one two four"), "one four");
  assert.equal(merge("one two three four", "one three four", "one two four"), "one four");
});

test("text: an insertion inside text another side deleted is kept", () => {
  const merged = merge("the quick brown fox", "the fox", "the quick very brown fox");
  assert.equal(merged, "the very fox");
});

test("text: insertions at the same place are ordered by stamp", () => {
  const merged = mergeText("ab", [
    { value: "aXb", stamp: at(2) },
    { value: "aYb", stamp: at(1) },
  ]);
  assert.equal(merged, "aYXb");
});

test("text: the same insertion made by two sides appears once", () => {
  assert.equal(merge("ab", "ab!", "ab!", "Zab"), "Zab!");
});

test("text: emoji are replaced whole, never half", () => {
  assert.equal(merge("I 👍 it", "I 👎 it", "I 👍 it!"), "I 👎 it!");
  assert.equal(merge("😀", "😁", "😂"), "😁😂");
});

test("text: removing the field counts as deleting all of its text", () => {
  assert.equal(
    mergeText("abc", [{ value: "xabc", stamp: at(1) }, { value: undefined, stamp: at(2) }]),
    "x",
  );
  assert.equal(mergeText("abc", [{ value: undefined, stamp: at(1) }]), "");
  assert.equal(mergeText(undefined, [{ value: undefined, stamp: at(1) }]), undefined);
});

test("text: small edits to a 100 KB text merge quickly and exactly", () => {
  const paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ";
  const base = paragraph.repeat(Math.ceil(100_000 / paragraph.length));
  const middle = base.length >> 1;
  const sidesList: MergeSide<string>[] = [
    { value: "Title\n" + base, stamp: at(1) },
    { value: base.slice(0, middle) + "🎉" + base.slice(middle + 5), stamp: at(2) },
    { value: base.slice(0, -1) + "!", stamp: at(3) },
    { value: "T" + base.slice(1, 50) + base.slice(60, -10) + "end", stamp: at(4) },
  ];
  const started = performance.now();
  const merged = mergeText(base, sidesList);
  const elapsed = performance.now() - started;
  const expected = "Title\nT" + base.slice(1, 50) + base.slice(60, middle) + "🎉" +
    base.slice(middle + 5, -10) + "end!";
  assert.equal(merged, expected);
  assert.ok(elapsed < 500, `took ${elapsed} ms`);
});

test("text: rewrites too large to diff finely still merge deterministically and quickly", () => {
  const random = (seed: number, length: number) => {
    const next = seededRandom(seed);
    return Array.from({ length }, () => "abcdefgh"[Math.floor(next() * 8)]).join("");
  };
  const base = random(1, 3000);
  const list = [random(2, 3000), random(3, 3000), "x" + base].map((value, i) => ({
    value,
    stamp: at(i),
  }));
  const started = performance.now();
  const merged = mergeText(base, list);
  const elapsed = performance.now() - started;
  assert.equal(mergeText(base, [...list].reverse()), merged);
  assert.ok(merged?.includes("x"));
  assert.ok(elapsed < 500, `took ${elapsed} ms`);
});

test("text: any stamps, any values: merging never throws and returns a string", () => {
  fc.assert(
    fc.property(maybeText, fc.array(fc.record({ value: maybeText, stamp })), (base, list) => {
      const merged = mergeText(base, list);
      const allAbsent = base === undefined && list.every((s) => s.value === undefined);
      assert.equal(typeof merged, allAbsent ? "undefined" : "string");
    }),
    RUNS,
  );
});
