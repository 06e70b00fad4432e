/**
 * Wire records whose text fields read their document's text only when read (chunked_text.ts):
 * the record an edit makes, local or imported, then costs the edit, not a copy of the whole text.
 * Such a field is an accessor: reading it gives the text's string (made once), and assigning it
 * replaces it with a plain value. A record copied on a path taken per edit is copied with
 * `copyRecord`, which carries such fields over unread: a spread would read them.
 *
 * The accessors are one pair per field name, shared by every record (each record keeps its texts
 * under a symbol): records of one shape then share their hidden class, as plain records do.
 */
import type { FieldRecord } from "../commit.ts";
import type { ChunkedText } from "./chunked_text.ts";

const TEXTS = Symbol("texts read lazily");

type TextHolder = FieldRecord & { [TEXTS]?: Record<string, ChunkedText> };

const accessors = new Map<string, PropertyDescriptor>();

function accessorFor(field: string): PropertyDescriptor {
  let accessor = accessors.get(field);
  if (!accessor) {
    accessor = {
      get(this: TextHolder) {
        return this[TEXTS]![field].toString();
      },
      set(this: TextHolder, value: unknown) {
        delete this[TEXTS]![field];
        Object.defineProperty(this, field, {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      },
      enumerable: true,
      configurable: true,
    };
    accessors.set(field, accessor);
  }
  return accessor;
}

function textsOf(record: TextHolder): Record<string, ChunkedText> {
  let texts = record[TEXTS];
  if (!texts) {
    texts = {};
    Object.defineProperty(record, TEXTS, { value: texts, writable: true, configurable: true });
  }
  return texts;
}

/** Makes `record[field]` read `text` when read. */
export function setLazyText(record: FieldRecord, field: string, text: ChunkedText): void {
  textsOf(record)[field] = text;
  Object.defineProperty(record, field, accessorFor(field));
}

/** A copy of `record` whose lazily read texts are carried over unread. */
export function copyRecord(record: FieldRecord): FieldRecord {
  const texts = (record as TextHolder)[TEXTS];
  const copy: FieldRecord = {};
  for (const field in record) {
    if (texts !== undefined && readsLazily(record, field)) setLazyText(copy, field, texts[field]);
    else copy[field] = record[field];
  }
  return copy;
}

/** Whether `record[field]` is a text read lazily (reading it would make its string). */
export function readsLazily(record: FieldRecord, field: string): boolean {
  const texts = (record as TextHolder)[TEXTS];
  // The field's own accessor, not a value put there after it was deleted.
  return texts !== undefined && field in texts &&
    Object.getOwnPropertyDescriptor(record, field)?.get === accessorFor(field).get;
}

/** Whether `record` holds `field` (a value other than undefined), without reading a lazy text. */
export function holdsField(record: FieldRecord, field: string): boolean {
  return readsLazily(record, field) || record[field] !== undefined;
}
