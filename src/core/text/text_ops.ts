/**
 * Text edits as operations: what a commit carries for a `text` field instead of the whole string
 * (docs/merge-rules.md, "Text"). Every character has an identity that never changes — the
 * session that typed it and a per-session clock — so an edit names the characters it means, not
 * positions that concurrent edits would shift:
 *
 * - an insert gives its characters' first clock (the rest follow one by one), the text, and the
 *   characters it was typed between (`left`, `right`: null for the start or the end);
 * - a delete names a stretch of characters one session typed with consecutive clocks;
 * - a base gives the text a field held as a whole string before its first edit (written by an
 *   older Cairn, or under a schema version where the field was a string), which the document
 *   starts from. Its characters are not the editor's: they are named after the text itself
 *   (text_doc.ts, `baseSession`), so peers that each start the document from the same string,
 *   concurrently, share its characters instead of each adding a copy.
 *
 * A typed word or a pasted paragraph is one insert; deleting a selection is one delete per
 * stretch typed in one go. The wire form (inside the commit's field record, so both log formats
 * carry it as they carry any value) is an array of operations:
 *
 *   insert  [clock, text, left, right]
 *   delete  [from, length]
 *   base    [text]
 *   char    clock (a number) for a character of the commit's own session, or [session, clock]
 *
 * Decoding validates everything: the bytes may come from a damaged disk or a hostile peer.
 */
import type { WireValue } from "../commit.ts";
import { corrupt } from "../wire_validation.ts";

/** A character's identity: the session that typed it, and that session's clock for it. */
export interface CharId {
  readonly session: string;
  readonly clock: number;
}

export interface InsertOp {
  readonly kind: "insert";
  /** Clock of the first character; the others follow (clock + 1, …). */
  readonly clock: number;
  readonly text: string;
  /** The character it was typed after (null: the start) and the one that followed it then. */
  readonly left: CharId | null;
  readonly right: CharId | null;
}

export interface DeleteOp {
  readonly kind: "delete";
  /** The first character deleted; `length` characters of that session with clocks from it on. */
  readonly from: CharId;
  readonly length: number;
}

export interface BaseOp {
  readonly kind: "base";
  /** The field's whole-string value the document starts from. */
  readonly text: string;
}

export type TextOp = InsertOp | DeleteOp | BaseOp;

/** The largest clock: a character's clock plus a length stays an exact integer. */
const MAX_CLOCK = 2 ** 48;

export function sameChar(a: CharId | null, b: CharId | null): boolean {
  return a === b || (a !== null && b !== null && a.clock === b.clock && a.session === b.session);
}

/** The wire form of `ops`, written by `session` (its own characters are named by clock alone). */
export function textOpsToWire(ops: readonly TextOp[], session: string): WireValue[] {
  const char = (id: CharId | null): WireValue =>
    id === null ? null : id.session === session ? id.clock : [id.session, id.clock];
  return ops.map((op) =>
    op.kind === "insert"
      ? [op.clock, op.text, char(op.left), char(op.right)]
      : op.kind === "delete"
      ? [char(op.from), op.length]
      : [op.text]
  );
}

/** Whether a wire value has the shape of text operations (a text field's value in a commit). */
export function isTextOpsWire(value: WireValue | undefined): value is WireValue[] {
  return Array.isArray(value);
}

/**
 * The operations of a wire value written by `session`, validated: E_CORRUPT_ENCODING for any
 * defect of shape. Whether the characters they name exist is the document's to check.
 */
export function textOpsFromWire(wire: unknown, session: string, what: string): TextOp[] {
  if (!Array.isArray(wire) || wire.length === 0) {
    throw corrupt(`${what}: text edits are a non-empty array`);
  }
  return wire.map((op, i) => {
    const where = `${what}[${i}]`;
    if (!Array.isArray(op)) throw corrupt(`${where}: a text edit is an array`);
    if (op.length === 4) {
      const [clock, text, left, right] = op;
      if (typeof text !== "string" || text.length === 0) {
        throw corrupt(`${where}: an insert's text is a non-empty string`);
      }
      checkClock(clock, text.length, where);
      return {
        kind: "insert",
        clock,
        text,
        left: charFromWire(left, session, where, true),
        right: charFromWire(right, session, where, true),
      } satisfies InsertOp;
    }
    if (op.length === 2) {
      const [from, length] = op;
      if (!Number.isSafeInteger(length) || length < 1) {
        throw corrupt(`${where}: a delete's length is a positive integer`);
      }
      const start = charFromWire(from, session, where, false)!;
      checkClock(start.clock, length, where);
      return { kind: "delete", from: start, length } satisfies DeleteOp;
    }
    if (op.length === 1) {
      const [text] = op;
      if (typeof text !== "string" || text.length === 0) {
        throw corrupt(`${where}: a base text is a non-empty string`);
      }
      return { kind: "base", text } satisfies BaseOp;
    }
    throw corrupt(`${where}: a text edit has 4 (insert), 2 (delete) or 1 (base) elements`);
  });
}

function charFromWire(
  wire: unknown,
  session: string,
  where: string,
  nullable: boolean,
): CharId | null {
  if (wire === null && nullable) return null;
  if (typeof wire === "number") {
    checkClock(wire, 1, where);
    return { session, clock: wire };
  }
  if (Array.isArray(wire) && wire.length === 2 && typeof wire[0] === "string" && wire[0] !== "") {
    checkClock(wire[1], 1, where);
    return { session: wire[0], clock: wire[1] };
  }
  throw corrupt(`${where}: a character is a clock or [session, clock]`);
}

function checkClock(clock: unknown, length: number, where: string): asserts clock is number {
  if (
    !Number.isSafeInteger(clock) || (clock as number) < 1 || (clock as number) + length > MAX_CLOCK
  ) {
    throw corrupt(`${where}: a clock is a positive integer below 2^48`);
  }
}
