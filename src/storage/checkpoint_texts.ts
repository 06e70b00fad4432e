/**
 * The text documents of a checkpoint (core/text/text_doc.ts): every character run with its
 * identity and origins, so opening restores each document without replaying its edits, and the
 * visible text once. One MessagePack value, an array with one entry per document:
 *
 *   [key, field, sessions, runs, text]
 *     sessions  the session ids the runs name (each once)
 *     runs      8 numbers per run, in document order: session (index into sessions), clock,
 *               length, deleted (0 or 1), left session (index + 1; 0: none), left clock, right
 *               session (index + 1; 0: none), right clock
 *     text      the visible text: the live runs' characters, in order
 *
 * Reading checks every entry (the file is read as hostile), and makes a document's objects only
 * when the repository first needs that document (an edit, an import, a merge): reads use the
 * item's value, which holds the text already.
 */
import { corrupt } from "../core/wire_validation.ts";
import { type StoredRun, TextDoc } from "../core/text/text_doc.ts";
import type { CharId } from "../core/text/text_ops.ts";
import type { WireValue } from "../core/commit.ts";
import type { RestoredTexts, TextSnapshot } from "../core/snapshot.ts";

const RUN_NUMBERS = 8;

/** The texts section's value, for packing. */
export function textsToWire(texts: readonly TextSnapshot[]): WireValue {
  return texts.map(({ key, field, runs }) => {
    const sessions = new Map<string, number>();
    const index = (session: string) => {
      let i = sessions.get(session);
      if (i === undefined) sessions.set(session, i = sessions.size);
      return i;
    };
    const numbers: number[] = [];
    let text = "";
    for (const run of runs) {
      numbers.push(index(run.session), run.clock, run.length, run.content === undefined ? 1 : 0);
      for (const origin of [run.left, run.right]) {
        numbers.push(origin === null ? 0 : index(origin.session) + 1, origin?.clock ?? 0);
      }
      if (run.content !== undefined) text += run.content;
    }
    return [key, field, [...sessions.keys()], numbers, text];
  });
}

/** Documents read back, made on first use. */
export class StoredTexts implements RestoredTexts {
  readonly #entries = new Map<string, Map<string, StoredDoc>>();

  /** The section's decoded value, checked whole: E_CORRUPT_ENCODING for any defect. */
  constructor(wire: unknown) {
    if (!Array.isArray(wire)) throw bad("layout");
    for (const entry of wire) {
      const doc = checkedDoc(entry);
      let fields = this.#entries.get(doc.key);
      if (!fields) this.#entries.set(doc.key, fields = new Map());
      if (fields.has(doc.field)) throw bad("duplicate document");
      fields.set(doc.field, doc);
    }
  }

  has(key: string, field: string): boolean {
    return this.#entries.get(key)?.has(field) === true;
  }

  text(key: string, field: string): TextDoc | undefined {
    const stored = this.#entries.get(key)?.get(field);
    return stored && TextDoc.fromRuns(runsOf(stored));
  }

  *texts(): IterableIterator<readonly [string, string]> {
    for (const [key, fields] of this.#entries) {
      for (const field of fields.keys()) yield [key, field];
    }
  }
}

interface StoredDoc {
  readonly key: string;
  readonly field: string;
  readonly sessions: readonly string[];
  readonly numbers: readonly number[];
  readonly text: string;
}

function checkedDoc(entry: unknown): StoredDoc {
  if (!Array.isArray(entry) || entry.length !== 5) throw bad("document");
  const [key, field, sessions, numbers, text] = entry;
  if (typeof key !== "string" || typeof field !== "string" || typeof text !== "string") {
    throw bad("document");
  }
  if (!Array.isArray(sessions) || !sessions.every((s) => typeof s === "string" && s !== "")) {
    throw bad("sessions");
  }
  if (!Array.isArray(numbers) || numbers.length % RUN_NUMBERS !== 0) throw bad("runs");
  const ends = new Map<number, number[][]>();
  let visible = 0;
  for (let at = 0; at < numbers.length; at += RUN_NUMBERS) {
    const [session, clock, length, deleted, leftSession, leftClock, rightSession, rightClock] =
      numbers.slice(at, at + RUN_NUMBERS);
    const index = (n: unknown, max: number) =>
      Number.isSafeInteger(n) && n as number >= 0 && n as number < max;
    if (!index(session, sessions.length) || !isClock(clock) || !isClock(length)) throw bad("run");
    if (deleted !== 0 && deleted !== 1) throw bad("run");
    for (const [s, c] of [[leftSession, leftClock], [rightSession, rightClock]]) {
      if (!index(s, sessions.length + 1) || (s === 0 ? c !== 0 : !isClock(c))) throw bad("origin");
    }
    if (deleted === 0) visible += length;
    let spans = ends.get(session);
    if (!spans) ends.set(session, spans = []);
    spans.push([clock, clock + length]);
  }
  // A character has one identity: a session's runs never share a clock.
  for (const spans of ends.values()) {
    spans.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) if (spans[i][0] < spans[i - 1][1]) throw bad("clocks");
  }
  if (visible !== text.length) throw bad("text length");
  return { key, field, sessions, numbers, text };
}

function* runsOf({ sessions, numbers, text }: StoredDoc): IterableIterator<StoredRun> {
  let at = 0;
  const origin = (session: number, clock: number): CharId | null =>
    session === 0 ? null : { session: sessions[session - 1], clock };
  for (let i = 0; i < numbers.length; i += RUN_NUMBERS) {
    const length = numbers[i + 2];
    const deleted = numbers[i + 3] === 1;
    yield {
      session: sessions[numbers[i]],
      clock: numbers[i + 1],
      length,
      content: deleted ? undefined : text.slice(at, at += length),
      left: origin(numbers[i + 4], numbers[i + 5]),
      right: origin(numbers[i + 6], numbers[i + 7]),
    };
  }
}

function isClock(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) < 2 ** 48;
}

function bad(what: string) {
  return corrupt(`checkpoint texts: bad ${what}`);
}
