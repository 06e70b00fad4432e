/**
 * The current text of every text field of a repository read without its schemas
 * (stored_database.ts). Only a schema says which fields are text, so without it an item's value
 * holds such a field as the edits its last commit carried (`[[7,5]]`), not as its text; the
 * documents that hold the text are the repository's own (repo/text_fields.ts), read here once
 * its blocks are applied.
 */
import type { FieldRecord } from "../core/commit.ts";
import type { Repository } from "../repo/repository.ts";
import { holdsTextEdits } from "../repo/text_fields.ts";

export class CurrentTexts {
  /** Item key → text field → its text: the documents an edit reached, which are surely text. */
  readonly #texts = new Map<string, Map<string, string>>();
  /**
   * Item key → the fields held as documents no edit reached: a text created empty, or an empty
   * set (the repository cannot tell them apart without the schema).
   */
  readonly #unedited = new Map<string, Set<string>>();

  /** The texts `repository` holds now. */
  constructor(repository: Pick<Repository, "heldTexts">) {
    for (const [key, field, text, edited] of repository.heldTexts()) {
      if (edited) {
        let fields = this.#texts.get(key);
        if (!fields) this.#texts.set(key, fields = new Map());
        fields.set(field, text);
      } else {
        let fields = this.#unedited.get(key);
        if (!fields) this.#unedited.set(key, fields = new Set());
        fields.add(field);
      }
    }
  }

  /** The text of item `key`'s field `field`, if it is held as text (a deleted item's too). */
  text(key: string, field: string): string | undefined {
    return this.#texts.get(key)?.get(field);
  }

  /**
   * The text a string written into item `key`'s field `field` is an edit of: its text, or "" for
   * a document no edit reached (a string there can only be text). Undefined when the field is
   * not held as a document: a string there is written whole.
   */
  editedFrom(key: string, field: string): string | undefined {
    return this.text(key, field) ?? (this.#unedited.get(key)?.has(field) ? "" : undefined);
  }

  /** Every item key and field held as text. */
  *fields(): IterableIterator<[string, string]> {
    for (const [key, fields] of this.#texts) {
      for (const field of fields.keys()) yield [key, field];
    }
  }

  /**
   * `wire`, the value of item `key`, with each text field holding its current text, as an
   * application with the schema reads it. A field shaped like edits with no text followed is
   * one whose edits could not apply yet (they wait for lost history): it reads as "". Other
   * fields stay as they are: an empty list may be an empty set as well as a text never edited
   * (whose document, if held, is no evidence either way).
   */
  valueOf(key: string, wire: FieldRecord): FieldRecord {
    const texts = this.#texts.get(key);
    let value: FieldRecord | undefined;
    for (const field in wire) {
      const text = texts?.get(field) ?? (holdsTextEdits(wire[field]) ? "" : undefined);
      if (text === undefined) continue;
      value ??= { ...wire };
      value[field] = text;
    }
    return value ?? wire;
  }
}
