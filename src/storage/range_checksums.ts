/**
 * CRC-32Cs of many ranges of one file, each for a bounded cost. Recovering from damage, a scan
 * tries every record magic (or `{"crc":"` in JSONL) it meets; a crafted file can put one every
 * few bytes, each claiming a record that runs to the end of the file. Checksumming each claim
 * afresh reads the rest of the file per candidate: quadratic (a 1 MB file took 17 s to open).
 *
 * Instead the file is checksummed once, forward from `base`, and the running CRC is kept every
 * MARK_STEP bytes. A range's CRC then comes from the CRCs of its two ends (each a kept mark plus
 * at most MARK_STEP bytes read again) by crc32cCombine: the register is linear, so
 * crc(A ‖ B) = x^(8·|B|)·crc(A) ⊕ crc(B), and crc(B) follows from crc(A ‖ B) and crc(A).
 */
import type { ByteSource } from "./byte_source.ts";
import { crc32c, crc32cCombine } from "./crc32c.ts";

/** Bytes between kept CRCs: what a range's end costs to read again (~1 µs). */
const MARK_STEP = 2048;
/** Bytes checksummed per read while the marks are extended. */
const EXTEND_CHUNK = 1024 * 1024;

export class RangeChecksums {
  readonly #source: ByteSource;
  readonly #base: number;
  /** marks[i]: the CRC-32C of the file's bytes [base, base + i * MARK_STEP). */
  readonly #marks: number[] = [0];

  /** Ranges asked of it must start at or after `base`. */
  constructor(source: ByteSource, base: number) {
    this.#source = source;
    this.#base = base;
  }

  /** The CRC-32C of the file's bytes [from, to), base ≤ from ≤ to ≤ the file's length. */
  async of(from: number, to: number): Promise<number> {
    return crc32cCombine(await this.#crcTo(from), await this.#crcTo(to), to - from);
  }

  /** The CRC-32C of [base, at). */
  async #crcTo(at: number): Promise<number> {
    const mark = Math.floor((at - this.#base) / MARK_STEP);
    await this.#extendTo(mark);
    const markAt = this.#base + mark * MARK_STEP;
    if (markAt === at) return this.#marks[mark];
    return crc32c(await this.#source.read(markAt, at - markAt), this.#marks[mark]);
  }

  /** Checksums forward until marks[mark] is known: each byte of the file at most once. */
  async #extendTo(mark: number): Promise<void> {
    while (this.#marks.length <= mark) {
      const first = this.#marks.length - 1;
      const from = this.#base + first * MARK_STEP;
      const steps = Math.min(mark - first, EXTEND_CHUNK / MARK_STEP);
      const bytes = await this.#source.read(from, steps * MARK_STEP);
      let crc = this.#marks[first];
      for (let step = 0; step < steps; step++) {
        crc = crc32c(bytes.subarray(step * MARK_STEP, (step + 1) * MARK_STEP), crc);
        this.#marks.push(crc);
      }
    }
  }
}
