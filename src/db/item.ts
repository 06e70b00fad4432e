/**
 * `Item<S>`: a handle on one item of a repository, typed by its schema. Handles are cheap and
 * hold no value of their own: every read sees the repository's current value. Once the
 * repository is closed, every method is E_CLOSED (lifetime.ts); `key` and `schema` stay readable.
 */
import type {
  AnySchema,
  FieldName,
  FieldRead,
  FieldValue,
  Schema,
  Values,
} from "../core/schema_types.ts";
import type { ItemChange } from "../repo/change_listeners.ts";
import type { Repository } from "../repo/repository.ts";
import { checkChanges, checkEvent, checkListener } from "./arguments.ts";
import type { RepositoryLifetime } from "./lifetime.ts";
import type { TypedReader } from "./typed_reader.ts";

export class Item<S extends AnySchema = Schema> {
  readonly key: string;
  readonly schema: S;
  readonly #repo: Repository;
  readonly #reader: TypedReader;
  readonly #life: RepositoryLifetime;

  /** @internal Created by RepositoryHandle. */
  constructor(
    repo: Repository,
    reader: TypedReader,
    life: RepositoryLifetime,
    key: string,
    schema: S,
  ) {
    this.#repo = repo;
    this.#reader = reader;
    this.#life = life;
    this.key = key;
    this.schema = schema;
  }

  /** False once the item is deleted (here or by a peer). */
  get exists(): boolean {
    this.#life.check();
    return this.#repo.value(this.key) !== undefined;
  }

  /** The field's value; `undefined` for an optional field that has none (see FieldRead). */
  get<K extends FieldName<S>>(field: K): FieldRead<S, K> {
    if (this.#life.ended) throw this.#life.closedError(); // check(), by hand: the hottest read
    return this.#reader.field(this.#repo, this.key, this.schema, field) as FieldRead<S, K>;
  }

  /** All fields as one frozen object of typed values. */
  toObject(): Readonly<Values<S>> {
    this.#life.check();
    return this.#reader.values(this.#repo, this.key, this.schema) as Readonly<Values<S>>;
  }

  /** Sets one field (`undefined` unsets an optional field). Visible at once; sealed this tick. */
  set<K extends FieldName<S>>(field: K, value: FieldValue<S, K> | undefined): this {
    this.#life.check();
    this.#reader.writeField(this.#repo, this.key, this.schema, field, value);
    return this;
  }

  /** Sets several fields in one commit (a plain object of fields; `{}` writes nothing). */
  update(changes: Partial<Values<S>>): this {
    this.#life.check();
    const checked = checkChanges(changes, this.schema.id);
    this.#reader.write(this.#repo, this.key, this.schema, checked);
    return this;
  }

  /**
   * Inserts `text` into the text field `field` at `index` (UTF-16 code units, as string indexes
   * count; not inside a surrogate pair). Carried as an edit, not the whole text: concurrent edits
   * of other peers merge character by character. Visible at once; sealed this tick.
   *
   * @example
   * note.insertText("body", 0, "Hello, ");
   */
  insertText(field: FieldName<S>, index: number, text: string): this {
    this.#life.check();
    this.#reader.editText(this.#repo, this.key, this.schema, field, index, 0, text);
    return this;
  }

  /** Deletes `length` code units of the text field `field` from `index`. */
  deleteText(field: FieldName<S>, index: number, length: number): this {
    this.#life.check();
    this.#reader.editText(this.#repo, this.key, this.schema, field, index, length, "");
    return this;
  }

  /** Replaces `length` code units of the text field `field` at `index` with `text`: one edit. */
  replaceText(field: FieldName<S>, index: number, length: number, text: string): this {
    this.#life.check();
    this.#reader.editText(this.#repo, this.key, this.schema, field, index, length, text);
    return this;
  }

  /**
   * Resolves when this item's writes so far are persisted as the database's durability mode
   * promises — in durable mode, fsynced. Writes of the same tick share one block and one fsync.
   */
  commit(): Promise<void> {
    if (this.#life.ended) return Promise.reject(this.#life.closedError());
    return this.#repo.flush();
  }

  delete(): void {
    this.#life.check();
    this.#repo.delete(this.key);
  }

  /**
   * Calls `listener` on every change of this item, local or remote. Returns an unsubscribe,
   * which works (and does nothing more) after the repository is closed.
   */
  on(event: "change", listener: (change: ItemChange) => void): () => void {
    this.#life.check();
    checkEvent(event, ["change"]);
    return this.#repo.onItemChange(this.key, checkListener(listener, "on"));
  }
}
