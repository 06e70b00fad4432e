/**
 * Who may read and write which repository. Either the application decides (the `authorize`
 * hook), or the built-in rules do: per repository an owner (the first session that writes it),
 * members with "read" or "write", and a public-read flag, kept in the store and managed through
 * `server.access`. The `open` option lets anyone read and write (for development).
 */
import { fromBase64Url } from "../../core/bytes.ts";
import { CairnError } from "../../core/errors.ts";
import { PUBLIC_KEY_BYTES } from "../../core/signing.ts";
import { isPlainObject } from "../../core/wire_validation.ts";
import { checkRepositoryPath } from "../../core/repository_path.ts";
import type { RulesStorage } from "./store.ts";

export type Right = "read" | "write";

export interface AuthorizeRequest {
  /** The session asking: the connection's for reads, the block author's for writes. */
  readonly session: string;
  /** That session's Ed25519 public key, base64url. */
  readonly publicKey: string;
  /** The connection's app token when the session is the connection's own, else null. */
  readonly token: string | null;
  readonly repository: string;
  readonly right: Right;
}

export type Authorize = (request: AuthorizeRequest) => boolean | Promise<boolean>;

export interface RepositoryRules {
  /** The owner's public key (base64url), or null until a first writer claims the repository. */
  readonly owner: string | null;
  /** Members' public keys (base64url) and their rights. */
  readonly members: Readonly<Record<string, Right>>;
  readonly publicRead: boolean;
}

export const NO_RULES: RepositoryRules = Object.freeze({
  owner: null,
  members: Object.freeze({}),
  publicRead: false,
});

/** The built-in rules: what `server.access` manages. */
export class AccessRules {
  readonly #storage: RulesStorage;
  readonly #rules: Map<string, RepositoryRules>;
  readonly #changeListeners = new Set<(repository: string) => void>();

  /** @internal Made by the server from its stored rules. */
  constructor(storage: RulesStorage, rules: Map<string, RepositoryRules>) {
    this.#storage = storage;
    this.#rules = rules;
    storage.onChangedElsewhere((repository, stored) => {
      if (sameRules(this.#rules.get(repository) ?? NO_RULES, stored)) return;
      this.#rules.set(repository, stored);
      this.#tell(repository);
    });
  }

  /** Gives a public key (base64url) a right on a repository: "write" includes reading. */
  async grant(repository: string, publicKey: string, right: Right): Promise<void> {
    if (right !== "read" && right !== "write") {
      throw new CairnError("E_BAD_ARGUMENT", `right must be "read" or "write"`);
    }
    const member = checkPublicKey(publicKey);
    await this.#change(checkRepositoryPath(repository), (current) => ({
      ...current,
      members: { ...current.members, [member]: right },
    }));
  }

  /** Takes a member's right away (the owner stays the owner). */
  async revoke(repository: string, publicKey: string): Promise<void> {
    const member = checkPublicKey(publicKey);
    await this.#change(checkRepositoryPath(repository), (current) => {
      const members = { ...current.members };
      delete members[member];
      return { ...current, members };
    });
  }

  async setPublicRead(repository: string, publicRead: boolean): Promise<void> {
    if (typeof publicRead !== "boolean") {
      throw new CairnError("E_BAD_ARGUMENT", "publicRead must be a boolean");
    }
    await this.#change(checkRepositoryPath(repository), (current) => ({ ...current, publicRead }));
  }

  /** A repository's rules (a copy). */
  rules(repository: string): RepositoryRules {
    const rules = this.#rules.get(checkRepositoryPath(repository)) ?? NO_RULES;
    return { owner: rules.owner, members: { ...rules.members }, publicRead: rules.publicRead };
  }

  /** Makes `publicKey` the owner of a repository that has none; a no-op otherwise. */
  async claim(repository: string, publicKey: string): Promise<void> {
    if ((this.#rules.get(repository) ?? NO_RULES).owner !== null) return;
    await this.#change(
      repository,
      (current) => current.owner === null ? { ...current, owner: publicKey } : current,
    );
  }

  /**
   * Calls `listener` with a repository's path each time its rules change, here or on another
   * server sharing the store (the server applies them to open connections); returns a function
   * that stops it.
   * @internal
   */
  onChange(listener: (repository: string) => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /** A repository without an owner is open to anyone until its first writer claims it. */
  allows(publicKey: string, repository: string, right: Right): boolean {
    const rules = this.#rules.get(repository) ?? NO_RULES;
    if (rules.owner === null || rules.owner === publicKey) return true;
    const member = rules.members[publicKey];
    if (member === "write") return true;
    return right === "read" && (member === "read" || rules.publicRead);
  }

  /**
   * Takes effect here at once (two first writers racing on this server cannot both become
   * owner), then is applied to the stored rules, which decide: another server may have changed
   * them meanwhile. A failed store puts the previous rules back. Listeners hear of it once
   * stored.
   */
  async #change(
    repository: string,
    change: (current: RepositoryRules) => RepositoryRules,
  ): Promise<void> {
    const hoped = change(this.#rules.get(repository) ?? NO_RULES);
    const stored = await tentatively(
      this.#rules,
      repository,
      hoped,
      () => this.#storage.update(repository, change),
    );
    // Changed again meanwhile (here, or a report from elsewhere): the later state stands.
    if (this.#rules.get(repository) === hoped) this.#rules.set(repository, stored);
    this.#tell(repository);
  }

  #tell(repository: string): void {
    for (const listener of this.#changeListeners) listener(repository);
  }
}

/**
 * Sets `map`'s entry to `value` while `store` runs, and puts the previous one back if `store`
 * fails (unless the entry changed again meanwhile): a change that was not kept must not stay
 * visible, nor be built on by the next.
 */
export async function tentatively<K, V, T>(
  map: Map<K, V>,
  key: K,
  value: V,
  store: () => Promise<T>,
): Promise<T> {
  const previous = map.get(key);
  map.set(key, value);
  try {
    return await store();
  } catch (err) {
    if (map.get(key) === value) {
      if (previous === undefined) map.delete(key);
      else map.set(key, previous);
    }
    throw err;
  }
}

/** Stored rules read back (from a file or a database row): their shape, or undefined. */
export function storedRules(value: unknown): RepositoryRules | undefined {
  if (!isPlainObject(value)) return undefined;
  const { owner, members, publicRead } = value;
  if (owner !== null && typeof owner !== "string") return undefined;
  if (typeof publicRead !== "boolean" || !isPlainObject(members)) return undefined;
  for (const right of Object.values(members)) {
    if (right !== "read" && right !== "write") return undefined;
  }
  return { owner, members: members as Record<string, Right>, publicRead };
}

function sameRules(a: RepositoryRules, b: RepositoryRules): boolean {
  if (a.owner !== b.owner || a.publicRead !== b.publicRead) return false;
  const keys = Object.keys(a.members);
  return keys.length === Object.keys(b.members).length &&
    keys.every((key) => a.members[key] === b.members[key]);
}

export interface AccessOptions {
  authorize?: Authorize;
  open?: boolean;
}

/**
 * The one question the server asks. A hook that throws or returns anything but true refuses:
 * a failing authorization must not open a repository.
 */
export function makeDecider(
  options: AccessOptions,
  rules: AccessRules,
): (request: AuthorizeRequest) => Promise<boolean> {
  const { authorize } = options;
  if (authorize) {
    return async (request) => {
      try {
        return (await authorize(request)) === true;
      } catch {
        return false;
      }
    };
  }
  if (options.open === true) return () => Promise.resolve(true);
  return (request) =>
    Promise.resolve(rules.allows(request.publicKey, request.repository, request.right));
}

function checkPublicKey(publicKey: unknown): string {
  const bytes = typeof publicKey === "string" ? fromBase64Url(publicKey) : undefined;
  if (bytes?.length !== PUBLIC_KEY_BYTES) {
    throw new CairnError("E_BAD_ARGUMENT", "a public key is 32 bytes in base64url");
  }
  return publicKey as string;
}
