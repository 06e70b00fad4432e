/**
 * The text fields of a repository's items: one TextDoc per item and text field, kept beside the
 * item states. Commits carry a text field as operations (core/text/text_ops.ts), never as the
 * whole string; an item state's wire record holds the field's current text, read from its
 * document (`overlay`), so reads, queries and indexes see a plain string.
 *
 * Whether a field is text comes from the commit's schema. A field is present in the item's value
 * when its commits say so (an operation list, possibly empty, is a present field); its text is
 * its document's. A value written before text became operations (a whole string, "legacy") is
 * read as it is; the first edit of such a field starts the document from that string (a base,
 * whose characters every replica names alike), then edits it, so the document starts from the
 * text everyone had.
 */
import type { Commit, FieldRecord, WireValue } from "../core/commit.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import type { Schema } from "../core/schema_types.ts";
import type { RestoredTexts, TextSnapshot } from "../core/snapshot.ts";
import { checkTextEdit, PendingEdits, type TextChange, TextDoc } from "../core/text/text_doc.ts";
import { ChunkedText } from "../core/text/chunked_text.ts";
import { copyRecord, holdsField, readsLazily, setLazyText } from "../core/text/text_record.ts";
import { type TextOp, textOpsFromWire, textOpsToWire } from "../core/text/text_ops.ts";
import { textEdits } from "../core/merge/text.ts";
import type { CommitView } from "./author_view.ts";

/** What one commit changed in one text field, in the order the changes happened. */
export interface TextFieldChange {
  readonly field: string;
  readonly changes: readonly TextChange[];
}

/** Texts checked in one block but not applied yet, per item and field. */
export type BlockTextCheck = Map<string, PendingEdits>;

const NO_FIELDS: readonly string[] = Object.freeze([]);

export class TextFields {
  readonly #registry: SchemaRegistry;
  /** Item key → field → document. */
  readonly #docs = new Map<string, Map<string, TextDoc>>();
  readonly #textFields = new WeakMap<Schema, readonly string[]>();
  /** Where documents not made yet may be found: a restored checkpoint's. */
  #stored: RestoredTexts | undefined;

  constructor(registry: SchemaRegistry) {
    this.#registry = registry;
  }

  /** Documents this set does not hold are looked up in `stored` (a checkpoint's, made then). */
  findMissingIn(stored: RestoredTexts): void {
    this.#stored = stored;
  }

  /** The text fields of a schema (by id; none for a schema not registered here). */
  fieldsOf(schemaId: string): readonly string[] {
    const schema = this.#registry.get(schemaId);
    if (!schema) return NO_FIELDS;
    let fields = this.#textFields.get(schema);
    if (!fields) {
      fields = textFieldNames(schema);
      this.#textFields.set(schema, fields);
    }
    return fields;
  }

  /**
   * Every document's runs, copied now (a checkpoint is built from them later, maybe in slices,
   * while edits go on). Documents of a restored checkpoint that nothing asked for yet are made.
   */
  snapshot(): TextSnapshot[] {
    for (const [key, field] of this.#stored?.texts() ?? []) this.doc(key, field);
    const texts: TextSnapshot[] = [];
    for (const [key, field, doc] of this.all()) texts.push({ key, field, runs: [...doc.runs()] });
    return texts;
  }

  /**
   * Every document's text now, a restored checkpoint's too (made as they are asked for), and
   * whether an edit ever reached it (TextDoc.edited).
   */
  *texts(): IterableIterator<[key: string, field: string, text: string, edited: boolean]> {
    for (const [key, field] of this.#stored?.texts() ?? []) this.doc(key, field);
    for (const [key, field, doc] of this.all()) {
      yield [key, field, doc.value.toString(), doc.edited];
    }
  }

  doc(key: string, field: string): TextDoc | undefined {
    const held = this.#docs.get(key)?.get(field);
    if (held) return held;
    const stored = this.#stored?.text(key, field);
    if (stored) this.#keep(key, field, stored);
    return stored;
  }

  /** Every document, by item key and field (for a checkpoint). */
  *all(): IterableIterator<[string, string, TextDoc]> {
    for (const [key, fields] of this.#docs) {
      for (const [field, doc] of fields) yield [key, field, doc];
    }
  }

  // ── local writes ─────────────────────────────────────────────────────────────────────────

  /**
   * A local write of whole text values (`create`, `set`, `update`): each text field of `record`
   * given as a string (but `skip`) becomes the smallest edit from the current text to it, applied
   * to the field's document. Returns the record the commit carries (text fields as operations) and what
   * changed; undefined when `record` has no text field.
   */
  write(
    key: string,
    schemaId: string,
    record: FieldRecord,
    current: FieldRecord | undefined,
    session: string,
    skip?: string,
  ): { record: FieldRecord; changes: TextFieldChange[] } | undefined {
    let carried: FieldRecord | undefined;
    const changes: TextFieldChange[] = [];
    for (const field of this.fieldsOf(schemaId)) {
      if (field === skip) continue;
      const text = record[field];
      if (typeof text !== "string") continue;
      const { doc, ops } = this.#docFor(key, field, current?.[field]);
      const fieldChanges: TextChange[] = [];
      // Edits from the end backwards, so each one's positions hold in the text as it was.
      const edits = textEdits(doc.text, text);
      for (let i = edits.length - 1; i >= 0; i--) {
        const { start, end, text: inserted } = edits[i];
        ops.push(...doc.delete(start, end - start));
        if (inserted.length > 0) {
          ops.push(doc.insert(start, inserted, session, doc.nextClock(session)));
        }
        fieldChanges.push({ index: start, deleted: end - start, inserted });
      }
      carried ??= copyRecord(record);
      carried[field] = textOpsToWire(ops, session);
      if (fieldChanges.length > 0) changes.push({ field, changes: fieldChanges });
    }
    return carried && { record: carried, changes };
  }

  /** Throws E_BAD_ARGUMENT unless `change` fits the field's text (`wire`: the item's value now). */
  checkEdit(key: string, field: string, wire: FieldRecord, change: TextChange): void {
    const doc = holdsField(wire, field) ? this.doc(key, field) : undefined;
    if (doc) return doc.checkEdit(change);
    const current = wire[field];
    checkTextEdit(typeof current === "string" ? current : "", change);
  }

  /**
   * A local edit by position (`insertText`, `deleteText`) of the item whose value is `wire`:
   * `edit` makes the operations on the field's document. Returns the field's wire value for the
   * commit and its text after the edit.
   */
  edit(
    key: string,
    field: string,
    wire: FieldRecord,
    session: string,
    edit: (doc: TextDoc) => TextOp[],
  ): { wire: WireValue; text: ChunkedText } {
    const present = holdsField(wire, field);
    // Read only when there is no document: then it is a plain value, a legacy string at most.
    const legacy = present && !this.has(key, field) ? wire[field] : undefined;
    const { doc, ops } = this.#docFor(key, field, legacy);
    // An unset field reads as absent, whatever its document still holds: an edit starts empty.
    if (!present) ops.push(...doc.delete(0, doc.length));
    ops.push(...edit(doc));
    return { wire: textOpsToWire(ops, session), text: doc.value };
  }

  /**
   * The field's document, made if there is none, and the operations a local write of it starts
   * with: none, except when the field holds a legacy whole-string value, which the new document
   * starts from — as a base (text_ops.ts), whose characters every replica names alike: peers that
   * make the first edit concurrently, from the same string, start from the same characters.
   */
  #docFor(
    key: string,
    field: string,
    current: WireValue | undefined,
  ): { doc: TextDoc; ops: TextOp[] } {
    const held = this.doc(key, field);
    if (held) return { doc: held, ops: [] };
    const doc = new TextDoc();
    this.#keep(key, field, doc);
    const ops = typeof current === "string" && current.length > 0 ? [doc.base(current)] : [];
    return { doc, ops };
  }

  // ── commits that enter (imports, the log) ─────────────────────────────────────────────────

  /**
   * Throws E_BAD_COMMIT (or E_CORRUPT_ENCODING) unless the commit's text operations can apply
   * (TextDoc.check): well formed, naming characters that exist, in order, without splitting a
   * surrogate pair. `block` holds the text operations of the same block's earlier commits.
   * Given `view`, which makes what the commit's author had seen (asked only of a commit that
   * edits text), its inserts must also stand between characters that were neighbours for it.
   */
  check(commit: Commit, block: BlockTextCheck, view?: () => CommitView): void {
    let authorView: CommitView | undefined;
    const record = changedRecord(commit);
    if (record === undefined) return;
    for (const field of this.#editedFields(commit.schema, record)) {
      const wire = record[field];
      if (!Array.isArray(wire) || wire.length === 0) continue;
      const ops = textOpsFromWire(wire, commit.session, `commit ${commit.key}.${field}`);
      const doc = this.doc(commit.key, field) ?? EMPTY;
      const at = checkedAt(commit.key, field);
      let pending = block.get(at);
      if (!pending) block.set(at, pending = new PendingEdits());
      const author = view && (authorView ??= view()).field(field);
      for (const op of ops) doc.check(op, commit.session, pending, author);
    }
  }

  /** The commit's text operations on `field`: none when it does not edit it as text. */
  opsOf(commit: Commit, field: string): readonly TextOp[] {
    const wire = changedRecord(commit)?.[field];
    if (!holdsTextEdits(wire)) return [];
    return textOpsFromWire(wire!, commit.session, `commit ${commit.key}.${field}`);
  }

  /**
   * Applies the text operations of `run`, checked commits of one item applied together (one
   * commit, or a chain from one block: see Repository.#applyRemoteRun); returns what they
   * changed, per field in order. `block`: what checking their block made. Where its check copied
   * a field's document with the block's operations applied, the copy is adopted instead of
   * applying them again — when this run holds every operation of the block on that field not yet
   * applied, and nothing has edited the document since it was copied (a change listener may,
   * between runs). Otherwise the operations apply to the document as it is now: adopted, the copy
   * would drop that edit, or show a later commit's text before that commit applied.
   */
  applyRun(run: readonly Commit[], block?: BlockTextCheck): TextFieldChange[] {
    const adopted = block && block.size > 0 ? this.#adoptable(run, block) : undefined;
    const perCommit = run.map((commit) => this.#apply(commit, adopted));
    return perCommit.length === 1 ? perCommit[0] : changesInOrder(perCommit);
  }

  /** The fields whose checked copy `run` adopts (see applyRun), with their pending edits. */
  #adoptable(run: readonly Commit[], block: BlockTextCheck): Map<string, PendingEdits> {
    const opsByField = new Map<string, number>();
    for (const commit of run) {
      const record = changedRecord(commit);
      if (record === undefined) continue;
      for (const field of this.#editedFields(commit.schema, record)) {
        const wire = record[field];
        if (Array.isArray(wire)) opsByField.set(field, (opsByField.get(field) ?? 0) + wire.length);
      }
    }
    const adopted = new Map<string, PendingEdits>();
    const key = run[0].key;
    for (const [field, ops] of opsByField) {
      const checked = block.get(checkedAt(key, field));
      if (checked?.appliedCopy === undefined || checked.untaken !== ops) continue;
      if (checked.standsFor(this.doc(key, field) ?? EMPTY)) adopted.set(field, checked);
    }
    return adopted;
  }

  /** Applies one commit's text operations, adopting the copies in `adopted` (see applyRun). */
  #apply(commit: Commit, adopted?: Map<string, PendingEdits>): TextFieldChange[] {
    const record = changedRecord(commit);
    if (record === undefined) return [];
    const changes: TextFieldChange[] = [];
    for (const field of this.#editedFields(commit.schema, record)) {
      const wire = record[field];
      if (!Array.isArray(wire)) continue;
      let doc = this.doc(commit.key, field);
      if (!doc) this.#keep(commit.key, field, doc = new TextDoc());
      if (wire.length === 0) continue;
      let fieldChanges: TextChange[] = [];
      const ops = textOpsFromWire(wire, commit.session, `commit ${commit.key}.${field}`);
      const checked = adopted?.get(field);
      if (checked !== undefined) {
        // The run's first commit on this field adopts the copy; the next find it in place.
        const copy = checked.appliedCopy!;
        if (doc !== copy) this.#keep(commit.key, field, copy);
        fieldChanges = checked.takeChanges(ops.length);
      } else for (const op of ops) fieldChanges.push(...doc.apply(op, commit.session));
      if (fieldChanges.length > 0) changes.push({ field, changes: fieldChanges });
    }
    return changes;
  }

  /**
   * `wire` with each text field holding its document's text, read lazily (a new record; `wire`
   * itself is left as it is): a field whose commits carried edits and that has no document yet
   * holds "". Fields absent from `wire` stay absent, and a legacy whole string without a document
   * stays as it is. Undefined when the schema is not registered here: which fields are text is
   * not known yet.
   */
  overlay(key: string, schemaId: string, wire: FieldRecord | undefined): FieldRecord | undefined {
    if (wire === undefined) return undefined;
    let overlaid: FieldRecord | undefined;
    for (const field of this.fieldsOf(schemaId)) {
      if (!this.#readsDocument(key, wire, field)) continue;
      overlaid ??= copyRecord(wire);
      setLazyText(overlaid, field, this.doc(key, field)?.value ?? ChunkedText.EMPTY);
    }
    return overlaid ?? wire;
  }

  /** Whether overlay would change `wire` (put a document's text in one of its fields). */
  overlays(key: string, schemaId: string, wire: FieldRecord | undefined): boolean {
    if (wire === undefined) return false;
    return this.fieldsOf(schemaId).some((field) => this.#readsDocument(key, wire, field));
  }

  /**
   * Whether text field `field` of `wire` reads as its document's text: it does already (lazily),
   * or it holds a list (edits), or a value with a document beside it.
   */
  #readsDocument(key: string, wire: FieldRecord, field: string): boolean {
    if (readsLazily(wire, field)) return true;
    const value = wire[field];
    return value !== undefined && (Array.isArray(value) || this.has(key, field));
  }

  /**
   * The fields of `record` that carry text edits: the schema's text fields, or — under a schema
   * not registered here — the fields that may be edits (mayBeTextEdits), so a document is kept
   * up to date before its schema is known, and made for a text created empty as it would be
   * under its schema (without it, a merge once the schema came took that field for a plain
   * string holding a list, and refused the value).
   */
  #editedFields(schemaId: string, record: FieldRecord): readonly string[] {
    if (this.#registry.get(schemaId)) return this.fieldsOf(schemaId);
    let edited: string[] | undefined; // most records have none: nothing allocated for them
    for (const field in record) if (mayBeTextEdits(record[field])) (edited ??= []).push(field);
    return edited ?? NONE;
  }

  /**
   * Whether `field` of `key` is held as a document (its value merges as one, not by diff); a
   * restored one is not made for the question.
   */
  has(key: string, field: string): boolean {
    return this.#docs.get(key)?.has(field) === true || this.#stored?.has(key, field) === true;
  }

  #keep(key: string, field: string, doc: TextDoc): void {
    let fields = this.#docs.get(key);
    if (!fields) this.#docs.set(key, fields = new Map());
    fields.set(field, doc);
  }
}

const EMPTY = new TextDoc();
const NONE: readonly string[] = Object.freeze([]);

/** Several commits' text changes as one's: per field, every change in the order they happened. */
function changesInOrder(perCommit: readonly TextFieldChange[][]): TextFieldChange[] {
  const byField = new Map<string, TextChange[]>();
  for (const changes of perCommit) {
    for (const { field, changes: each } of changes) {
      const list = byField.get(field);
      if (list === undefined) byField.set(field, [...each]);
      else for (const change of each) list.push(change);
    }
  }
  return [...byField].map(([field, changes]) => ({ field, changes }));
}

/** Where a block's check keeps the pending edits of one item's text field. */
function checkedAt(key: string, field: string): string {
  return `${key}\u0000${field}`;
}

function changedRecord(commit: Commit): FieldRecord | undefined {
  return commit.kind === "value" ? commit.value : commit.kind === "delta" ? commit.set : undefined;
}

/**
 * Whether a field's value may be text edits, which only its schema tells: a list of lists, or an
 * empty list (a text created empty; an empty set's values are one too). A list of anything else,
 * as a set's values are, holds no edits.
 */
export function mayBeTextEdits(value: WireValue | undefined): boolean {
  return Array.isArray(value) && (value.length === 0 || Array.isArray(value[0]));
}

/** Whether a field's value has the form of text edits: a list of lists, no other type's form. */
export function holdsTextEdits(value: WireValue | undefined): boolean {
  return Array.isArray(value) && value.length > 0 && Array.isArray(value[0]);
}

/** The names of a schema's text fields. */
export function textFieldNames(schema: Schema): string[] {
  return schema.fieldNames.filter((name) => schema.fields[name].type === "text");
}

/**
 * `value` with each text field that holds edits (an operation list, as commits store it) standing
 * as an empty text, for what reads a value through the fields' codecs: a commit's check, or an
 * upgrade in a merge. The text itself is the field's document's.
 */
export function withEditsAsEmptyText(
  value: FieldRecord,
  textFields: readonly string[],
): FieldRecord {
  let plain: FieldRecord | undefined;
  for (const field of textFields) {
    if (!Array.isArray(value[field])) continue;
    plain ??= { ...value };
    plain[field] = "";
  }
  return plain ?? value;
}
