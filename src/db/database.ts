/**
 * `Cairn`: one database per process or tab. It owns the local session (an Ed25519 key pair),
 * the schema registry, the set of trusted peer sessions, and the open repositories.
 */
import { sessionIdFromPublicKey } from "../core/block.ts";
import { fromBase64Url, toBase64Url } from "../core/bytes.ts";
import { CairnError } from "../core/errors.ts";
import { HybridClock } from "../core/hlc.ts";
import { SchemaRegistry } from "../core/schema.ts";
import type { AnySchema } from "../core/schema_types.ts";
import type { CryptoSuite, SigningKey } from "../core/signing.ts";
import { Repository } from "../repo/repository.ts";
import { cryptoSuite } from "../runtime/crypto_suite.ts";
import { checkRepositoryPath } from "./paths.ts";
import { RepositoryHandle } from "./repository_handle.ts";
import { TypedReader } from "./typed_reader.ts";

export interface CairnOptions {
  /**
   * Trusted mode: blocks are neither signed nor verified. For single-user local data where no
   * block ever comes from another party; much cheaper writes.
   */
  trusted?: boolean;
  /** The 32-byte secret of an existing session (from `exportSecretKey()`), to act as it again. */
  secretKey?: Uint8Array;
  /** Public keys (base64url, from a peer's `db.session.publicKey`) whose blocks are accepted. */
  trust?: readonly string[];
  /** Schemas to register up front, e.g. to read items a peer created before creating any here. */
  schemas?: readonly AnySchema[];
}

export interface SessionInfo {
  /** Short id derived from the public key; commit ids are `<session id>.<seq>`. */
  readonly id: string;
  /** The session's Ed25519 public key, base64url: give it to peers so they can trust you. */
  readonly publicKey: string;
}

export class Cairn {
  readonly session: SessionInfo;
  readonly trusted: boolean;
  readonly #key: SigningKey;
  readonly #suite: CryptoSuite;
  readonly #registry = new SchemaRegistry();
  readonly #reader = new TypedReader(this.#registry);
  readonly #clock = new HybridClock();
  readonly #trustedSessions = new Set<string>();
  readonly #repositories = new Map<string, { handle: RepositoryHandle; repo: Repository }>();
  #closed = false;

  private constructor(session: SessionInfo, key: SigningKey, suite: CryptoSuite, trusted: boolean) {
    this.session = session;
    this.#key = key;
    this.#suite = suite;
    this.trusted = trusted;
  }

  /** Opens a database. Without a path (storage comes later) it lives in memory. */
  static async open(options: CairnOptions = {}): Promise<Cairn> {
    const suite = await cryptoSuite();
    const key = options.secretKey
      ? await suite.ed25519.fromSecret(options.secretKey)
      : await suite.ed25519.generate();
    const session = {
      id: await sessionIdFromPublicKey(key.publicKey, suite),
      publicKey: toBase64Url(key.publicKey),
    };
    const db = new Cairn(session, key, suite, options.trusted === true);
    for (const publicKey of options.trust ?? []) await db.trust(publicKey);
    db.register(...options.schemas ?? []);
    return db;
  }

  /** The session's 32-byte secret: keep it safe; `Cairn.open({ secretKey })` resumes the session. */
  exportSecretKey(): Uint8Array {
    return this.#key.secret.slice();
  }

  /**
   * Registers schemas (creating an item, or reading one with an explicit schema, registers it
   * too). Items whose concurrent versions waited for one of these schemas are merged now.
   */
  register(...schemas: AnySchema[]): void {
    let added = false;
    for (const schema of schemas) {
      if (this.#registry.get(schema.id) === schema) continue;
      this.#registry.register(schema);
      added = true;
    }
    if (added) {
      for (const handle of this.#repositories.values()) {
        handle.repo.remergeUnresolved();
      }
    }
  }

  /** Accepts blocks signed by the session with this public key (base64url). */
  async trust(publicKey: string): Promise<void> {
    const bytes = fromBase64Url(publicKey);
    if (!bytes || bytes.length !== 32) {
      throw new CairnError(
        "E_BAD_KEY",
        "a public key is 32 bytes in base64url (a peer's db.session.publicKey)",
      );
    }
    this.#trustedSessions.add(await sessionIdFromPublicKey(bytes, this.#suite));
  }

  /** Opens (creating if new) the repository at `path`, e.g. "/data/todos". */
  open(path: string): Promise<RepositoryHandle> {
    try {
      return Promise.resolve(this.#openRepository(path));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #openRepository(path: string): RepositoryHandle {
    this.#checkOpen();
    checkRepositoryPath(path);
    let open = this.#repositories.get(path);
    if (!open) {
      const repo = new Repository(path, {
        session: this.session.id,
        publicKey: this.#key.publicKey,
        signer: this.trusted ? null : { key: this.#key, ed25519: this.#suite.ed25519 },
        suite: this.#suite,
        registry: this.#registry,
        clock: this.#clock,
        isTrusted: (session) => this.#trustedSessions.has(session),
      });
      const register = (schema: AnySchema) => this.register(schema);
      const handle = new RepositoryHandle(
        repo,
        register,
        this.#registry,
        this.#reader,
        this.session.id,
      );
      open = { handle, repo };
      this.#repositories.set(path, open);
    }
    return open.handle;
  }

  /** Resolves when every write so far, in every open repository, is sealed. */
  async flush(): Promise<void> {
    await Promise.all([...this.#repositories.values()].map(({ repo }) => repo.flush()));
  }

  /** Flushes and closes one repository, or (without a path) every repository and the database. */
  async close(path?: string): Promise<void> {
    const closing = path === undefined
      ? [...this.#repositories.values()]
      : [this.#repositories.get(path)].filter((open) => open !== undefined);
    await Promise.all(closing.map(({ repo }) => repo.flush()));
    for (const { repo } of closing) {
      repo.close();
      this.#repositories.delete(repo.path);
    }
    if (path === undefined) this.#closed = true;
  }

  #checkOpen(): void {
    if (this.#closed) throw new CairnError("E_CLOSED", "the database is closed");
  }
}
