/**
 * The edits of the text rows modelled on dmonad/crdt-benchmarks (B1: one user, B2: two users at
 * once, B3: many users), generated from a fixed seed so every engine and runtime gets the same
 * ones. Each edit is a patch `[position, deleted, inserted]` in positions that are the same in
 * UTF-16 and code points (the text is lowercase ASCII). The shapes follow the published
 * definitions; the random draws are this module's own, so texts differ from the published run's.
 */
import { xorshift32 } from "./items.ts";
import type { Patch } from "./traces.ts";

/** N of the published runs. */
export const PUBLISHED_N = 6_000;

/** A random stream with the draws the cases need. */
class Draw {
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = xorshift32(seed);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + (this.#next() % (max - min + 1));
  }

  coin(): boolean {
    return (this.#next() & 1) === 1;
  }

  /** `min` to `max` random lowercase letters. */
  word(min: number, max: number): string {
    let word = "";
    for (let n = this.int(min, max); n > 0; n--) word += String.fromCharCode(97 + this.int(0, 25));
    return word;
  }
}

/** A text edited by patches, keeping the patches and the text they leave. */
class Script {
  text: string;
  readonly patches: Patch[] = [];

  constructor(start = "") {
    this.text = start;
  }

  insert(pos: number, ins: string): void {
    this.patches.push([pos, 0, ins]);
    this.text = this.text.slice(0, pos) + ins + this.text.slice(pos);
  }

  delete(pos: number, del: number): void {
    this.patches.push([pos, del, ""]);
    this.text = this.text.slice(0, pos) + this.text.slice(pos + del);
  }
}

export type OneUserCase = "B1.1" | "B1.4" | "B1.7";

export const ONE_USER_CASES: Record<OneUserCase, string> = {
  "B1.1": "append N characters",
  "B1.4": "insert N characters at random positions",
  "B1.7": "insert or delete strings at random positions, N times",
};

/** B1: N edits by one user, each its own transaction; the text they leave. */
export function oneUser(which: OneUserCase, n: number, seed = 1): Script {
  const draw = new Draw(seed);
  const script = new Script();
  for (let i = 0; i < n; i++) {
    const length = script.text.length;
    if (which === "B1.1") script.insert(length, draw.word(1, 1));
    else if (which === "B1.4") script.insert(draw.int(0, length), draw.word(1, 1));
    else {
      const pos = draw.int(0, length);
      if (pos === length || draw.coin()) script.insert(pos, draw.word(2, 10));
      else script.delete(pos, draw.int(1, Math.min(9, length - pos)));
    }
  }
  return script;
}

export type TwoUserCase = "B2.2" | "B2.4";

export const TWO_USER_CASES: Record<TwoUserCase, string> = {
  "B2.2": "each inserts N characters at random positions",
  "B2.4": "each inserts and deletes at random positions, 2N edits",
};

/** The 100 characters both users of B2 start from, synced before they edit. */
export function sharedStart(seed = 2): string {
  return new Draw(seed).word(100, 100);
}

/**
 * B2: one user's edits of the shared start, as that user sees the text (they are concurrent with
 * the other user's). B2.4 makes two edits per step: a word, then another word or a deletion there.
 */
export function twoUsers(which: TwoUserCase, n: number, start: string, seed: number): Patch[] {
  const draw = new Draw(seed);
  const script = new Script(start);
  for (let i = 0; i < n; i++) {
    const pos = draw.int(0, script.text.length);
    if (which === "B2.2") {
      script.insert(pos, draw.word(1, 1));
      continue;
    }
    script.insert(pos, draw.word(3, 9));
    const length = script.text.length;
    if (pos === length || draw.coin()) script.insert(pos, draw.word(2, 10));
    else script.delete(pos, draw.int(1, Math.min(9, length - pos)));
  }
  return script.patches;
}

/** B3's number of users for a given N, as published: 20 × ⌊√N⌋ (1,540 for N = 6,000). */
export function manyUsers(n: number): number {
  return 20 * Math.floor(Math.sqrt(n));
}
