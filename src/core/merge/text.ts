/**
 * Text merges per character, like a three-way merge in version control but without conflict
 * markers. Each side's edits against base are found with a shortest-edit diff (Myers) over code
 * points, so a surrogate pair (an emoji, say) is never split; an insertion or deletion that
 * could sit at several places is put at a word boundary. Then:
 *
 * - a base character survives unless some side deleted it (concurrent deletes simply overlap);
 * - every insertion survives, including one made inside a stretch another side deleted;
 * - insertions at the same place in base are placed in stamp order, and identical insertions
 *   there appear once, so a side merged with a copy of itself gives that side back.
 *
 * The result does not depend on the order of the sides. It is not associative in general:
 * merging two sides first gives one text carrying both sides' edits under a single stamp, so
 * its insertions may order differently against a third side's, and its diff against base may
 * align differently from the two separate diffs. The engine always merges all leaves at once
 * from one base, so only order independence is needed for every peer to agree.
 */
import { agreedValue, CONFLICT } from "./equal.ts";
import { compareStamps, type FieldMerge } from "./types.ts";

/** One change to a stretch of base: code units [start, end) replaced by `text`. */
export interface TextEdit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

const same = (a: string, b: string) => a === b;

export const mergeText: FieldMerge<string> = (base, sides) => {
  const agreed = agreedValue(base, sides, same);
  if (agreed !== CONFLICT) return agreed ?? (base === undefined ? undefined : "");

  const origin = base ?? "";
  const changed = sides.filter((side) => (side.value ?? "") !== origin);
  changed.sort((a, b) => compareStamps(a.stamp, b.stamp));
  const edits: TextEdit[] = [];
  for (const side of changed) {
    for (const edit of textEdits(origin, side.value ?? "")) edits.push(edit);
  }
  // The sort is stable, so edits at the same start stay in stamp order.
  edits.sort((a, b) => a.start - b.start);
  return applyEdits(origin, edits);
};

/** Writes base with every edit applied: deletions united, insertions kept (see module doc). */
function applyEdits(base: string, edits: readonly TextEdit[]): string {
  let result = "";
  let next = 0; // base[0, next) has been written or deleted
  let i = 0;
  while (i < edits.length) {
    const gap = edits[i].start;
    if (gap > next) {
      result += base.slice(next, gap);
      next = gap;
    }
    const groupStart = i;
    for (; i < edits.length && edits[i].start === gap; i++) {
      const { text, end } = edits[i];
      if (text !== "" && !insertedBefore(edits, groupStart, i, text)) result += text;
      if (end > next) next = end;
    }
  }
  return result + base.slice(next);
}

function insertedBefore(edits: readonly TextEdit[], from: number, to: number, text: string) {
  for (let j = from; j < to; j++) if (edits[j].text === text) return true;
  return false;
}

/**
 * Diffs beyond this many inserted plus deleted code points replace the whole differing
 * stretch instead: the diff's memory grows with the square of that count.
 */
const MAX_DIFF_COST = 1024;

/**
 * The edits that turn `base` into `side`, in increasing order, none touching another; offsets
 * are code units and always fall between code points.
 */
export function textEdits(base: string, side: string): TextEdit[] {
  return placeAtBoundaries(base, side, alignedSpans(base, side)).map((span) => ({
    start: span.start,
    end: span.end,
    text: side.slice(span.sideStart, span.sideEnd),
  }));
}

/** base[start, end) became side[sideStart, sideEnd); code units. */
interface Span {
  start: number;
  end: number;
  sideStart: number;
  sideEnd: number;
}

/** A shortest edit script as spans; the whole differing stretch if it is too costly. */
function alignedSpans(base: string, side: string): Span[] {
  const prefix = commonPrefixLength(base, side);
  const suffix = commonSuffixLength(base, side, prefix);
  const baseEnd = base.length - suffix;
  const sideEnd = side.length - suffix;
  if (prefix === baseEnd && prefix === sideEnd) return [];
  const whole = [{ start: prefix, end: baseEnd, sideStart: prefix, sideEnd }];
  if (prefix === baseEnd || prefix === sideEnd) return whole;
  const a = codePoints(base, prefix, baseEnd);
  const b = codePoints(side, prefix, sideEnd);
  const hunks = shortestEdit(a.points, b.points);
  if (hunks === undefined) return whole;
  return hunks.map((h) => ({
    start: a.offsets[h.aStart],
    end: a.offsets[h.aEnd],
    sideStart: b.offsets[h.bStart],
    sideEnd: b.offsets[h.bEnd],
  }));
}

/**
 * A pure insertion or deletion can often sit at several places with the same result: deleting
 * " two" or "two " from "one two three". Each is moved to the place that best lines up with
 * word and line boundaries (the leftmost among equals), then merged into the edit before it if
 * they meet. So the same change is always reported the same way, and deletions of neighbouring
 * words by different sides meet cleanly instead of leaving or eating a stray letter.
 */
function placeAtBoundaries(base: string, side: string, spans: Span[]): Span[] {
  const result: Span[] = [];
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i];
    const previous = result.at(-1);
    if (span.start === span.end || span.sideStart === span.sideEnd) {
      const floor = previous === undefined ? 0 : previous.end;
      const ceiling = i + 1 < spans.length ? spans[i + 1].start : base.length;
      shift(span, bestShift(base, side, span, floor, ceiling));
    }
    if (previous !== undefined && previous.end === span.start) {
      previous.end = span.end;
      previous.sideEnd = span.sideEnd;
    } else {
      result.push(span);
    }
  }
  return result;
}

function shift(span: Span, by: number): void {
  span.start += by;
  span.end += by;
  span.sideStart += by;
  span.sideEnd += by;
}

/**
 * How far (in code units, negative is left) to move a pure edit, staying within base[floor,
 * ceiling]. The moved text is the deleted stretch of base or the inserted stretch of side; it
 * can move by one code point when the code point it would uncover equals the one it covers.
 */
function bestShift(base: string, side: string, span: Span, floor: number, ceiling: number) {
  const inserted = span.start === span.end;
  const text = inserted ? side : base;
  let from = inserted ? span.sideStart : span.start;
  let to = inserted ? span.sideEnd : span.end;
  let moved = 0;
  while (span.start + moved > floor) {
    const width = sameCodePointBefore(text, from, to);
    if (width === 0) break;
    from -= width;
    to -= width;
    moved -= width;
  }
  let best = moved;
  let bestScore = boundaryScore(text, from) + boundaryScore(text, to);
  while (span.end + moved < ceiling) {
    const width = sameCodePointAt(text, from, to);
    if (width === 0) break;
    from += width;
    to += width;
    moved += width;
    const score = boundaryScore(text, from) + boundaryScore(text, to);
    if (score > bestScore) {
      best = moved;
      bestScore = score;
    }
  }
  return best;
}

/** How good a place s[i] is for an edit to begin or end: text edge, line, space, punctuation. */
function boundaryScore(s: string, i: number): number {
  if (i === 0 || i === s.length) return 4;
  const around = s.slice(i - 1, i + 1);
  if (around.includes("\n")) return 3;
  if (/\s/.test(around)) return 2;
  return /^[\p{L}\p{N}_]{2}$/u.test(around) ? 0 : 1;
}

/** The width of the code point ending at s[i] if the one ending at s[j] is the same, else 0. */
function sameCodePointBefore(s: string, i: number, j: number): number {
  const width = widthBefore(s, i);
  return width === widthBefore(s, j) && s.slice(i - width, i) === s.slice(j - width, j) ? width : 0;
}

/** The width of the code point starting at s[i] if the one starting at s[j] is the same, else 0. */
function sameCodePointAt(s: string, i: number, j: number): number {
  if (j >= s.length) return 0;
  const width = widthAt(s, i);
  return width === widthAt(s, j) && s.slice(i, i + width) === s.slice(j, j + width) ? width : 0;
}

function widthBefore(s: string, end: number): number {
  return end >= 2 && isLowSurrogate(s.charCodeAt(end - 1)) && isHighSurrogate(s.charCodeAt(end - 2))
    ? 2
    : 1;
}

function widthAt(s: string, start: number): number {
  return isHighSurrogate(s.charCodeAt(start)) && isLowSurrogate(s.charCodeAt(start + 1)) ? 2 : 1;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

function commonPrefixLength(a: string, b: string): number {
  const limit = Math.min(a.length, b.length);
  let n = 0;
  while (n < limit && a.charCodeAt(n) === b.charCodeAt(n)) n++;
  // Never end the prefix between the two halves of a surrogate pair.
  if (n > 0 && isHighSurrogate(a.charCodeAt(n - 1))) n--;
  return n;
}

function commonSuffixLength(a: string, b: string, prefix: number): number {
  const limit = Math.min(a.length, b.length) - prefix;
  let n = 0;
  while (n < limit && a.charCodeAt(a.length - 1 - n) === b.charCodeAt(b.length - 1 - n)) n++;
  if (n > 0 && isLowSurrogate(a.charCodeAt(a.length - n))) n--;
  return n;
}

/** The code points of s[start, end), and the code-unit offset of each (plus `end`). */
function codePoints(s: string, start: number, end: number) {
  const points: number[] = [];
  const offsets: number[] = [];
  for (let i = start; i < end;) {
    const point = s.codePointAt(i)!;
    points.push(point);
    offsets.push(i);
    i += point > 0xffff ? 2 : 1;
  }
  offsets.push(end);
  return { points, offsets };
}

/** a[aStart, aEnd) replaced by b[bStart, bEnd), in code points. */
interface Hunk {
  aStart: number;
  aEnd: number;
  bStart: number;
  bEnd: number;
}

/**
 * Myers' O((N+M)·D) shortest edit script from a to b, as hunks in increasing order; undefined
 * when it needs more than MAX_DIFF_COST insertions and deletions. Keeps, for each cost d, the
 * furthest x reached on diagonals -d..d, then walks back from the end through those rows.
 */
function shortestEdit(a: readonly number[], b: readonly number[]): Hunk[] | undefined {
  const n = a.length;
  const m = b.length;
  const maxCost = Math.min(n + m, MAX_DIFF_COST);
  const offset = maxCost + 1;
  const furthest = new Int32Array(2 * maxCost + 3);
  const rows: Int32Array[] = [];
  for (let d = 0; d <= maxCost; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = stepsDown(furthest, offset, k, d)
        ? furthest[offset + k + 1]
        : furthest[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      furthest[offset + k] = x;
      if (x >= n && y >= m) return walkBack(rows, n, m, d);
    }
    rows.push(furthest.slice(offset - d, offset + d + 1));
  }
  return undefined;
}

/** Whether the path to diagonal k at cost d comes from diagonal k+1 (an insertion). */
function stepsDown(row: Int32Array, offset: number, k: number, d: number): boolean {
  return k === -d || (k !== d && row[offset + k - 1] < row[offset + k + 1]);
}

function walkBack(rows: readonly Int32Array[], n: number, m: number, cost: number): Hunk[] {
  const hunks: Hunk[] = [];
  let open: Hunk | undefined;
  let x = n;
  let y = m;
  for (let d = cost; d > 0; d--) {
    const row = rows[d - 1]; // diagonals -(d-1)..d-1 after cost d-1
    const k = x - y;
    const down = stepsDown(row, d - 1, k, d);
    const prevK = down ? k + 1 : k - 1;
    const prevX = row[d - 1 + prevK];
    const prevY = prevX - prevK;
    const editX = down ? prevX : prevX + 1; // where the one edit ends and equal text begins
    if (open !== undefined && x > editX) {
      hunks.push(open);
      open = undefined;
    }
    if (open === undefined) {
      open = { aStart: prevX, aEnd: editX, bStart: prevY, bEnd: editX - k };
    } else {
      open.aStart = prevX;
      open.bStart = prevY;
    }
    x = prevX;
    y = prevY;
  }
  if (open !== undefined) hunks.push(open);
  return hunks.reverse();
}
