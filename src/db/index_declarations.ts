/**
 * The fields a stored repository was asked to index with `createIndex`, kept in its settings file
 * (storage/settings.ts) so those indexes come back when it is opened again. `createIndex` stays
 * synchronous: the file is written in the background, at most one write at a time, the next one
 * carrying everything added meanwhile; `settled()` (awaited by flush and close) waits for it.
 */
import { CairnError, isCairnError } from "../core/errors.ts";
import type { StorageBackend } from "../storage/backend.ts";
import { readRepositorySettings, writeRepositorySettings } from "../storage/settings.ts";

export class IndexDeclarations {
  readonly #backend: StorageBackend;
  readonly #path: string;
  readonly #warn: (message: string) => void;
  #fields: readonly string[];
  #saving: Promise<void> | undefined;
  #saveAgain = false;
  #closed = false;

  private constructor(
    backend: StorageBackend,
    path: string,
    fields: readonly string[],
    warn: (message: string) => void,
  ) {
    this.#backend = backend;
    this.#path = path;
    this.#fields = fields;
    this.#warn = warn;
  }

  /**
   * Reads the repository's declarations. A damaged settings file only costs the indexes it
   * declared (they are performance, not data): it is reported through `warn` and ignored. One
   * written by a newer Cairn is refused (E_UNSUPPORTED_VERSION) and left untouched.
   */
  static async open(
    backend: StorageBackend,
    path: string,
    warn: (message: string) => void,
  ): Promise<IndexDeclarations> {
    let fields: readonly string[] = [];
    try {
      fields = (await readRepositorySettings(backend, path))?.indexes ?? [];
    } catch (err) {
      if (!isCairnError(err, "E_NOT_A_LOG") && !isCairnError(err, "E_CORRUPT_ENCODING")) throw err;
      warn(`ignored its settings file, which is damaged (${err.message}): call createIndex again`);
    }
    return new IndexDeclarations(backend, path, fields, warn);
  }

  /** The declared fields: those stored when the repository was opened, then those added. */
  get fields(): readonly string[] {
    return this.#fields;
  }

  /** Declares `field` (no-op when declared) and stores the declarations in the background. */
  add(field: string): void {
    if (this.#closed) throw new CairnError("E_CLOSED", `repository ${this.#path} is closed`);
    if (this.#fields.includes(field)) return;
    this.#fields = [...this.#fields, field];
    this.#save();
  }

  /** Resolves once every declaration made so far is stored (or its failure reported). */
  async settled(): Promise<void> {
    while (this.#saving) await this.#saving;
  }

  /** Waits for the declarations to be stored; later declarations fail with E_CLOSED. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.settled();
  }

  #save(): void {
    if (this.#saving) {
      this.#saveAgain = true;
      return;
    }
    const fields = this.#fields;
    this.#saving = writeRepositorySettings(this.#backend, this.#path, { indexes: fields })
      .catch((err) => {
        // The index works in this session; only its return after reopening is lost.
        const why = err instanceof Error ? err.message : String(err);
        this.#warn(`could not store the index declarations ${JSON.stringify(fields)}: ${why}`);
      })
      .finally(() => {
        this.#saving = undefined;
        if (this.#saveAgain) {
          this.#saveAgain = false;
          this.#save();
        }
      });
  }
}
