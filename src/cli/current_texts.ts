/**
 * The current text of every text field of a repository read without its schemas
 * (stored_database.ts). Only a schema says which fields are text, so without it an item's value
 * holds such a field as the edits its last commit carried (`[[7,5]]`), not as its text, and the
 * documents that hold the text are the repository's own (repo/text_fields.ts). Its change events
 * carry every change those documents go through, in order — what an editor applies to stay in
 * step — so the texts are followed here from them, as an editor would.
 */
import type { FieldRecord, WireValue } from "../core/commit.ts";
import { ChunkedText } from "../core/text/chunked_text.ts";
import type { Repository } from "../repo/repository.ts";

export class CurrentTexts {
  /** Item key → text field → its text. */
  readonly #texts = new Map<string, Map<string, ChunkedText>>();

  /** Follows `repository`'s text documents: made before it applies anything. */
  constructor(repository: Pick<Repository, "onChange">) {
    repository.onChange(({ key, text }) => {
      if (text === undefined) return;
      let fields = this.#texts.get(key);
      if (!fields) this.#texts.set(key, fields = new Map());
      for (const { field, changes } of text) {
        let current = fields.get(field) ?? ChunkedText.EMPTY;
        for (const { index, deleted, inserted } of changes) {
          current = current.splice(index, deleted, inserted);
        }
        fields.set(field, current);
      }
    });
  }

  /** The text of item `key`'s field `field`, if it is held as text (a deleted item's too). */
  text(key: string, field: string): string | undefined {
    return this.#texts.get(key)?.get(field)?.toString();
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
   * fields stay as they are: an empty list may be an empty set as well as a text without edits.
   */
  valueOf(key: string, wire: FieldRecord): FieldRecord {
    const texts = this.#texts.get(key);
    let value: FieldRecord | undefined;
    for (const field in wire) {
      const text = texts?.get(field) ?? (isTextEdits(wire[field]) ? ChunkedText.EMPTY : undefined);
      if (text === undefined) continue;
      value ??= { ...wire };
      value[field] = text.toString();
    }
    return value ?? wire;
  }
}

/**
 * Whether a field's value has the form of text edits: a list of lists, the form no other field
 * type has, by which a repository tells them without the schema (repo/text_fields.ts).
 */
function isTextEdits(value: WireValue | undefined): boolean {
  return Array.isArray(value) && value.length > 0 && Array.isArray(value[0]);
}
