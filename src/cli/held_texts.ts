/**
 * Text fields in an import (import.ts). Only a schema says which fields are text, and the command
 * has none; what it can know is which fields the database already holds as text documents: those
 * its log carries edits for (current_texts.ts). Each such field needs care:
 *
 * - A string written over it as a plain value would not replace its text: an application would
 *   go on reading the document's text (or the string, from a checkpoint — whichever it read
 *   last). So the field is written as present and unchanged (`[]`, edits of nothing), then
 *   edited from its text to the imported one, as an application's `set` does. The same holds
 *   for a text created empty and never edited, whose document the database holds too (it may
 *   be an empty set's as well: a string there can only be text, a list only a set).
 * - A list there (as in an item of the same schema) would be taken for edits by an application
 *   reading it, and the block holding it refused whole: a field held as text takes a string, or
 *   `[]`, which an export writes for a text that was never edited.
 *
 * A string anywhere else is written whole, which an application reads as the field's text.
 */
import { CairnError } from "../core/errors.ts";
import type { ItemValue } from "../core/item_state.ts";
import { textEdits } from "../core/merge/text.ts";
import type { Repository } from "../repo/repository.ts";
import type { CurrentTexts } from "./current_texts.ts";
import type { ExportedItem } from "./item_file.ts";
import { readStoredDatabase, readStoredRepository } from "./stored_database.ts";

export class HeldTexts {
  static readonly NONE = new HeldTexts(undefined, new Map());

  readonly #texts: CurrentTexts | undefined;
  /** Schema id → the fields held as text in items of that schema. */
  readonly #bySchema: ReadonlyMap<string, ReadonlySet<string>>;

  private constructor(
    texts: CurrentTexts | undefined,
    bySchema: ReadonlyMap<string, ReadonlySet<string>>,
  ) {
    this.#texts = texts;
    this.#bySchema = bySchema;
  }

  /** The text fields of each of `paths` in database `directory` (NONE for a new repository). */
  static async read(directory: string, paths: readonly string[]): Promise<Map<string, HeldTexts>> {
    const db = await readStoredDatabase(directory);
    try {
      const held = new Map<string, HeldTexts>();
      for (const path of paths) {
        if (!db.repositories.includes(path)) {
          held.set(path, HeldTexts.NONE);
          continue;
        }
        const { repository, texts } = await readStoredRepository(db, path);
        const bySchema = new Map<string, Set<string>>();
        for (const [key, field] of texts.fields()) {
          const schema = repository.state(key)!.schema;
          let fields = bySchema.get(schema);
          if (!fields) bySchema.set(schema, fields = new Set());
          fields.add(field);
        }
        held.set(path, new HeldTexts(texts, bySchema));
      }
      return held;
    } finally {
      await db.backend.close();
    }
  }

  /** E_WRONG_TYPE, naming the place, for a field held as text given anything but text. */
  check(items: readonly ExportedItem[], where: string): void {
    for (const [i, { key, schema, value }] of items.entries()) {
      for (const field in value) {
        const held = this.#texts?.text(key, field) !== undefined ||
          this.#bySchema.get(schema)?.has(field) === true;
        const given = value[field];
        if (!held || typeof given === "string" || (Array.isArray(given) && given.length === 0)) {
          continue;
        }
        throw new CairnError(
          "E_WRONG_TYPE",
          `${where}[${i}].value.${field}: this database holds ${field} of ${schema} items as ` +
            `text: it is imported as a string`,
        );
      }
    }
  }

  /** Whether the item's value now (`current`) reads as `item`, its texts as texts. */
  holds(current: ItemValue | undefined, { key, schema, value }: ExportedItem): boolean {
    if (current?.wire === undefined || current.schema !== schema) return false;
    const wire = { ...(this.#texts?.valueOf(key, current.wire) ?? current.wire) };
    // A text created empty and never edited: read from a checkpoint it is "", an export (which
    // reads the log) writes it as `[]`. The same text either way.
    for (const field in value) {
      const given = value[field];
      if (
        Array.isArray(given) && given.length === 0 && wire[field] === "" &&
        this.#texts?.editedFrom(key, field) === ""
      ) wire[field] = given;
    }
    return JSON.stringify(wire) === JSON.stringify(value);
  }

  /** Writes `item` into `repo` (created unless `live`), its fields held as text as edits. */
  write(repo: Repository, { key, schema, value }: ExportedItem, live: boolean): void {
    let written = value;
    const edited: [field: string, from: string, to: string][] = [];
    for (const field in value) {
      const text = this.#texts?.editedFrom(key, field);
      const to = value[field];
      if (text === undefined || typeof to !== "string") continue;
      if (written === value) written = { ...value };
      written[field] = [];
      if (to !== text) edited.push([field, text, to]);
    }
    if (live) repo.writeValue(key, schema, written);
    else repo.create(key, schema, written);
    for (const [field, from, to] of edited) {
      // One edit over the stretch that differs: the characters around it keep who typed them.
      const edits = textEdits(from, to);
      const start = edits[0].start;
      const end = edits[edits.length - 1].end;
      const inserted = to.slice(start, to.length - (from.length - end));
      repo.editText(key, schema, field, { index: start, deleted: end - start, inserted });
    }
  }
}
