/**
 * Who may read and write which repository. Either the application decides (the `authorize`
 * hook), or the built-in rules do: per repository an owner (the first session that writes it),
 * members with "read" or "write", and a public-read flag, kept in the store and managed through
 * `server.access`. The `open` option lets anyone read and write (for development).
 */
import { fromBase64Url } from "../../core/bytes.ts";
import { CairnError } from "../../core/errors.ts";
import { PUBLIC_KEY_BYTES } from "../../core/signing.ts";
import { checkRepositoryPath } from "../../db/paths.ts";
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

const NO_RULES: RepositoryRules = Object.freeze({ owner: null, members: {}, publicRead: false });

/** The built-in rules: what `server.access` manages. */
export class AccessRules {
  readonly #storage: RulesStorage;
  readonly #rules: Map<string, RepositoryRules>;
  readonly #changeListeners = new Set<(repository: string) => void>();

  /** @internal Made by the server from its stored rules. */
  constructor(storage: RulesStorage, rules: Map<string, RepositoryRules>) {
    this.#storage = storage;
    this.#rules = rules;
  }

  /** Gives a public key (base64url) a right on a repository: "write" includes reading. */
  async grant(repository: string, publicKey: string, right: Right): Promise<void> {
    if (right !== "read" && right !== "write") {
      throw new CairnError("E_BAD_ARGUMENT", `right must be "read" or "write"`);
    }
    const current = this.rules(repository);
    const members = { ...current.members, [checkPublicKey(publicKey)]: right };
    await this.#save(repository, { ...current, members });
  }

  /** Takes a member's right away (the owner stays the owner). */
  async revoke(repository: string, publicKey: string): Promise<void> {
    const current = this.rules(repository);
    const members = { ...current.members };
    delete members[checkPublicKey(publicKey)];
    await this.#save(repository, { ...current, members });
  }

  async setPublicRead(repository: string, publicRead: boolean): Promise<void> {
    if (typeof publicRead !== "boolean") {
      throw new CairnError("E_BAD_ARGUMENT", "publicRead must be a boolean");
    }
    await this.#save(repository, { ...this.rules(repository), publicRead });
  }

  /** A repository's rules (a copy). */
  rules(repository: string): RepositoryRules {
    const rules = this.#rules.get(checkRepositoryPath(repository)) ?? NO_RULES;
    return { owner: rules.owner, members: { ...rules.members }, publicRead: rules.publicRead };
  }

  /** Makes `publicKey` the owner of a repository that has none; a no-op otherwise. */
  async claim(repository: string, publicKey: string): Promise<void> {
    const current = this.rules(repository);
    if (current.owner === null) await this.#save(repository, { ...current, owner: publicKey });
  }

  /**
   * Calls `listener` with a repository's path each time its rules change (the server applies
   * them to open connections); returns a function that stops it.
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
   * Takes effect at once (two first writers racing cannot both become owner), then is stored;
   * a failed store puts the previous rules back. Listeners hear of it once stored.
   */
  async #save(repository: string, rules: RepositoryRules): Promise<void> {
    const previous = this.#rules.get(repository);
    this.#rules.set(repository, rules);
    try {
      await this.#storage.save(repository, rules);
    } catch (err) {
      if (this.#rules.get(repository) === rules) {
        if (previous) this.#rules.set(repository, previous);
        else this.#rules.delete(repository);
      }
      throw err;
    }
    for (const listener of this.#changeListeners) listener(repository);
  }
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
