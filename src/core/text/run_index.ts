/**
 * Where a text document's runs are, by visible position, without walking the whole list
 * (text_doc.ts). Runs are cut into groups of consecutive runs, at most MAX_GROUP each, and every
 * group counts the visible characters of its runs. A run's position is the groups before its
 * own plus its own group's runs before it; a position's run is found the same way. With n runs
 * that is about n / MAX_GROUP + MAX_GROUP steps, where a walk along the list took up to n: edits
 * at scattered places (two users typing at once, a peer's edits merged in) made each edit walk
 * thousands of runs.
 *
 * Runs are never removed from a document (deleted ones stay as tombstones), so groups only grow,
 * and one past MAX_GROUP runs is cut in halves.
 */

/** What the index needs of a run. */
export interface IndexedRun {
  readonly next: IndexedRun | null;
  /** Its visible characters (0 once deleted). */
  readonly visible: number;
  /** Set by the index. */
  group: RunGroup | undefined;
}

/** Runs per group at most: cutting one costs a walk of that many runs, and finds are about as long. */
const MAX_GROUP = 128;

/** The room left between the orders of two groups when they are numbered afresh. */
const ORDER_GAP = 1 << 16;

export class RunGroup {
  /** The group's first run in document order. */
  first: IndexedRun;
  runs = 0;
  visible = 0;
  next: RunGroup | null = null;
  /**
   * Grows along the list, so which of two groups comes first is one comparison (precedes):
   * walking the groups from the head to find out cost each check of a peer's block (up to 64²
   * questions) a walk of the document, 10–35 ms per 4 KB block on a long one.
   */
  order: number;

  constructor(first: IndexedRun, order: number) {
    this.first = first;
    this.order = order;
  }
}

export class RunIndex<R extends IndexedRun> {
  #head: RunGroup | null = null;

  /** `run` was just linked after `after` (null: as the first run), with its visible characters. */
  linked(run: R, after: R | null): void {
    let group: RunGroup;
    if (after !== null) {
      group = after.group!;
    } else if (this.#head !== null) {
      group = this.#head;
      group.first = run;
    } else {
      group = this.#head = new RunGroup(run, 0);
    }
    run.group = group;
    group.runs++;
    group.visible += run.visible;
    if (group.runs > MAX_GROUP) this.#cut(group);
  }

  /** `run`'s visible characters changed by `delta` (grown, deleted, or cut off into another). */
  resized(run: R, delta: number): void {
    run.group!.visible += delta;
  }

  /** The number of visible characters before `run`. */
  indexOf(run: R): number {
    const own = run.group!;
    let index = 0;
    for (let group = this.#head; group !== own; group = group!.next) index += group!.visible;
    for (let other = own.first; other !== run; other = other.next!) index += other.visible;
    return index;
  }

  /** Whether run `a` stands before run `b` (another run). */
  precedes(a: R, b: R): boolean {
    if (a.group === b.group) {
      for (let run = a.next; run !== null && run.group === a.group; run = run.next) {
        if (run === b) return true;
      }
      return false;
    }
    return a.group!.order < b.group!.order;
  }

  /**
   * The run holding the visible character at `index` (which must exist), and the number of
   * visible characters before that run.
   */
  locate(index: number): { run: R; before: number } {
    let before = 0;
    let group = this.#head!;
    while (before + group.visible <= index) {
      before += group.visible;
      group = group.next!;
    }
    let run = group.first;
    while (before + run.visible <= index) {
      before += run.visible;
      run = run.next!;
    }
    return { run: run as R, before };
  }

  /** Cuts an overfull group in halves. */
  #cut(group: RunGroup): void {
    let run = group.first;
    let visible = 0;
    const kept = group.runs >> 1;
    for (let i = 0; i < kept; i++) {
      visible += run.visible;
      run = run.next!;
    }
    const after = group.next === null ? group.order + 2 * ORDER_GAP : group.next.order;
    const rest = new RunGroup(run, Math.floor((group.order + after) / 2));
    rest.runs = group.runs - kept;
    rest.visible = group.visible - visible;
    rest.next = group.next;
    group.next = rest;
    group.runs = kept;
    group.visible = visible;
    for (let i = 0; i < rest.runs; i++, run = run.next!) run.group = rest;
    if (rest.order === group.order) this.#renumber();
  }

  /** Numbers every group afresh, ORDER_GAP apart: no room was left between two of them. */
  #renumber(): void {
    let order = 0;
    for (let group = this.#head; group !== null; group = group.next, order += ORDER_GAP) {
      group.order = order;
    }
  }
}
