/**
 * The files store's own small files, next to its Cairn database: `server.json` (the server id
 * and the epoch, made once) and `access.json` (the built-in access rules). Each is replaced
 * atomically; writes to one file are made one at a time.
 */
import { toBase64Url } from "../../core/bytes.ts";
import { CairnError } from "../../core/errors.ts";
import { isPlainObject } from "../../core/wire_validation.ts";
import type { StorageBackend } from "../../storage/backend.ts";
import { type RepositoryRules, storedRules } from "./access.ts";

const SERVER_FILE = "server.json";
const ACCESS_FILE = "access.json";

export interface ServerIdentity {
  readonly serverId: string;
  /** The epoch of every repository opened undamaged. */
  readonly epoch: string;
  /** Epochs made for repositories whose history was found damaged. */
  readonly repositoryEpochs: Readonly<Record<string, string>>;
}

export class ServerFiles {
  readonly #backend: StorageBackend;
  #writing: Promise<unknown> = Promise.resolve();

  constructor(backend: StorageBackend) {
    this.#backend = backend;
  }

  /** The stored identity, made (and stored) the first time. */
  async identity(): Promise<ServerIdentity> {
    const stored = await this.#read(SERVER_FILE);
    if (stored !== undefined) {
      if (
        !isPlainObject(stored) || typeof stored.serverId !== "string" ||
        typeof stored.epoch !== "string" || !isPlainObject(stored.repositoryEpochs)
      ) throw this.#damaged(SERVER_FILE);
      return stored as unknown as ServerIdentity;
    }
    const identity = {
      serverId: `cairn-${randomName()}`,
      epoch: randomName(),
      repositoryEpochs: {},
    };
    await this.saveIdentity(identity);
    return identity;
  }

  saveIdentity(identity: ServerIdentity): Promise<void> {
    return this.#write(SERVER_FILE, identity);
  }

  async loadRules(): Promise<Map<string, RepositoryRules>> {
    const stored = await this.#read(ACCESS_FILE) ?? {};
    if (!isPlainObject(stored)) throw this.#damaged(ACCESS_FILE);
    const rules = new Map<string, RepositoryRules>();
    for (const [repository, value] of Object.entries(stored)) {
      const checked = storedRules(value);
      if (!checked) throw this.#damaged(ACCESS_FILE);
      rules.set(repository, checked);
    }
    return rules;
  }

  /** Writes every repository's rules (the file is small: one entry per managed repository). */
  saveRules(rules: ReadonlyMap<string, RepositoryRules>): Promise<void> {
    return this.#write(ACCESS_FILE, Object.fromEntries(rules));
  }

  async #read(name: string): Promise<unknown> {
    const bytes = await this.#backend.readFile(name);
    if (bytes === undefined) return undefined;
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (err) {
      throw this.#damaged(name, err);
    }
  }

  #write(name: string, value: unknown): Promise<void> {
    const bytes = new TextEncoder().encode(JSON.stringify(value, null, 2));
    const write = this.#writing.catch(() => {}).then(() =>
      this.#backend.writeFileAtomic(name, bytes)
    );
    this.#writing = write;
    return write;
  }

  #damaged(name: string, cause?: unknown): CairnError {
    return new CairnError("E_NOT_A_LOG", `${name} is not a Cairn sync server file`, { cause });
  }
}

/** 16 random bytes in base64url: server ids and epochs. */
export function randomName(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}
