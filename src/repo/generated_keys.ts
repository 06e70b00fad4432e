/**
 * The keys a repository makes for items created without one: `<seq>-<session prefix>`, where
 * `seq` is the creating commit's sequence number in base 36 and the prefix is the first
 * characters of the session id. Unique without randomness, since a session never reuses a seq.
 *
 * The item map files such keys by their number rather than by hashing the string: Deno's V8
 * spends 0.3–0.8 µs hashing a string it has not hashed before (Node's about 0.07 µs), more than
 * the rest of an in-memory create, and every created key is such a string. Only numbers near what
 * this repository has used are filed so: a key is any string a caller or a peer chooses, and one
 * spelled with a huge number would otherwise make the array, which every scan walks, that long.
 */

/** Session-id characters in a generated key: 48 bits, enough to tell the writers of one repository apart. */
const SESSION_PREFIX_LENGTH = 8;

/** Numbers above this are left to the hashed path: the item map keeps the others in an array. */
const MAX_FILED_SEQ = 2 ** 31 - 1;

/**
 * How far past the last commit number this repository has used a key's number may go and still be
 * filed by it: newKey may skip numbers whose keys are taken, and a block of this session's own
 * commits read back is applied before its numbers count as used. A key further out was chosen,
 * not made here: it is filed by hash, so the array never outgrows this repository's own writes.
 */
const FILED_MARGIN = 4096;

const DIGIT_0 = 48;
const DIGIT_9 = 57;
const LETTER_A = 97;
const LETTER_Z = 122;

export class GeneratedKeys {
  /** "-" and the session prefix: what every key of this session ends with. */
  readonly #suffix: string;
  /** The last commit number this repository has used (its next key is made from a later one). */
  readonly #used: () => number;

  constructor(session: string, used: () => number) {
    this.#suffix = `-${session.slice(0, SESSION_PREFIX_LENGTH)}`;
    this.#used = used;
  }

  /** The key for an item created by the commit with sequence number `seq`. */
  make(seq: number): string {
    return seq.toString(36) + this.#suffix;
  }

  /** Whether the key of number `seq` (from seqOf; -1: none) is to be filed by it now. */
  files(seq: number): boolean {
    return seq >= 0 && seq <= this.#used() + FILED_MARGIN;
  }

  /** What seqOf returns for the key made from `seq`: the number, or -1 if too large to file. */
  filedSeq(seq: number): number {
    return seq <= MAX_FILED_SEQ ? seq : -1;
  }

  /**
   * The number `key` was made from, or -1 for any other key (another session's, one a caller
   * chose, or a number too large to file). Only the spelling `make` writes counts — lowercase
   * digits, no leading zero — so each number stands for exactly one key.
   */
  seqOf(key: string): number {
    const suffix = this.#suffix;
    const digits = key.length - suffix.length;
    // Six base-36 digits reach past MAX_FILED_SEQ; fewer than one is no number.
    if (digits < 1 || digits > 6 || key.charCodeAt(0) === DIGIT_0) return -1;
    for (let i = 0; i < suffix.length; i++) {
      if (key.charCodeAt(digits + i) !== suffix.charCodeAt(i)) return -1;
    }
    let seq = 0;
    for (let i = 0; i < digits; i++) {
      const code = key.charCodeAt(i);
      if (code >= DIGIT_0 && code <= DIGIT_9) seq = seq * 36 + code - DIGIT_0;
      else if (code >= LETTER_A && code <= LETTER_Z) seq = seq * 36 + code - LETTER_A + 10;
      else return -1;
    }
    return this.filedSeq(seq);
  }
}
