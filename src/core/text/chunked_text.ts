/**
 * The visible text of a text document as an immutable list of chunks of at most CHUNK code
 * units. An edit makes a new ChunkedText that shares every chunk it does not touch, so it costs
 * the edit, the chunk or two it lands in, and a copy of the chunk list (one pointer per CHUNK code
 * units) — not a copy of the text, as a JavaScript string would (slicing a string built by
 * concatenation flattens it: a copy of the whole text per keystroke). Each item state keeps the
 * ChunkedText of its own moment, so old states keep reading their own text; the string is made on
 * first read and kept.
 */

/** The most code units one chunk holds. */
export const CHUNK = 1024;

export class ChunkedText {
  readonly #chunks: readonly string[];
  /** Where each chunk ends: `#ends[i]` is the code units in chunks 0..i. */
  readonly #ends: readonly number[];
  #string: string | undefined;

  private constructor(chunks: readonly string[], ends: readonly number[]) {
    this.#chunks = chunks;
    this.#ends = ends;
  }

  static readonly EMPTY: ChunkedText = new ChunkedText([], []);

  static from(text: string): ChunkedText {
    if (text.length === 0) return ChunkedText.EMPTY;
    const chunks = cut(text);
    const made = new ChunkedText(chunks, endsOf(chunks, [], 0));
    made.#string = text;
    return made;
  }

  get length(): number {
    const ends = this.#ends;
    return ends.length === 0 ? 0 : ends[ends.length - 1];
  }

  /** How many chunks hold the text: about length / CHUNK to 2 × length / CHUNK. */
  get chunkCount(): number {
    return this.#chunks.length;
  }

  /** The code unit at `index` (0 ≤ index < length). */
  charCodeAt(index: number): number {
    const at = this.#chunkHolding(index);
    return this.#chunks[at].charCodeAt(index - this.#startOf(at));
  }

  /** The text as one string, made on the first call. */
  toString(): string {
    return this.#string ??= this.#chunks.join("");
  }

  /** This text with `deleted` code units removed at `index` and `inserted` put there. */
  splice(index: number, deleted: number, inserted: string): ChunkedText {
    if (deleted === 0 && inserted.length === 0) return this;
    const chunks = this.#chunks;
    if (chunks.length === 0) return ChunkedText.from(inserted);
    // The chunks the edit touches: from the one holding `index` (the last one for an append) to
    // the one holding its last deleted code unit.
    const first = index === this.length ? chunks.length - 1 : this.#chunkHolding(index);
    const last = deleted === 0 ? first : this.#chunkHolding(index + deleted - 1);
    const firstStart = this.#startOf(first);
    const lastStart = this.#startOf(last);
    let merged = chunks[first].slice(0, index - firstStart) + inserted +
      chunks[last].slice(index + deleted - lastStart);
    let after = last + 1;
    // A sliver takes in its neighbour, so that deletions do not leave a list of tiny chunks.
    if (merged.length < CHUNK / 2 && after < chunks.length) merged += chunks[after++];
    const replaced = chunks.slice(0, first);
    for (const piece of cut(merged)) replaced.push(piece);
    for (let i = after; i < chunks.length; i++) replaced.push(chunks[i]);
    return new ChunkedText(replaced, endsOf(replaced, this.#ends, first));
  }

  /** The chunk holding code unit `index` (0 ≤ index < length): a binary search of the ends. */
  #chunkHolding(index: number): number {
    const ends = this.#ends;
    let low = 0;
    let high = ends.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (ends[mid] > index) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  #startOf(chunk: number): number {
    return chunk === 0 ? 0 : this.#ends[chunk - 1];
  }
}

/**
 * `text` in pieces of at most CHUNK code units (none for ""), of equal size: a chunk an edit
 * overfills splits in halves, so the next edits there fit again (cut as CHUNK plus the rest, each
 * keystroke into a full chunk would leave a new one-character chunk behind).
 */
function cut(text: string): string[] {
  if (text.length <= CHUNK) return text.length === 0 ? [] : [text];
  const size = Math.ceil(text.length / Math.ceil(text.length / CHUNK));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** The ends of `chunks`: those before `from` taken from `known`, the rest counted. */
function endsOf(chunks: readonly string[], known: readonly number[], from: number): number[] {
  const ends = known.slice(0, from);
  let end = from === 0 ? 0 : known[from - 1];
  for (let i = from; i < chunks.length; i++) ends.push(end += chunks[i].length);
  return ends;
}
