/**
 * Every error Cairn raises on purpose is a `CairnError` with a stable `code`, so callers can
 * branch on `err.code` instead of parsing messages. Codes are part of the public API: add new
 * ones freely, never rename or reuse one.
 */
export type CairnErrorCode =
  /** Bytes that claim to be a commit or block but do not decode to one. */
  | "E_CORRUPT_ENCODING"
  /** A signature that does not verify, or a key that cannot be used. */
  | "E_BAD_SIGNATURE"
  /** A key, signature or other crypto input of the wrong shape or length. */
  | "E_BAD_KEY"
  /** The runtime offers no usable Ed25519 implementation. */
  | "E_CRYPTO_UNAVAILABLE"
  /** A block whose session chain lacks the blocks before it; it may be applied once they arrive. */
  | "E_CHAIN_GAP"
  /** A block that contradicts its session's chain: the author forked its own history. */
  | "E_CHAIN_FORK"
  /** A block at or behind its session's chain tip, most likely one already held. */
  | "E_CHAIN_STALE"
  /** A schema definition that is malformed, or a schema id registered twice differently. */
  | "E_BAD_SCHEMA"
  /** A value names a field its schema does not declare. */
  | "E_UNKNOWN_FIELD"
  /** A field value that does not have the field's type. */
  | "E_WRONG_TYPE"
  /** A required field that is missing or being unset. */
  | "E_REQUIRED_FIELD"
  /** A field value its schema's `validate` function rejected. */
  | "E_INVALID_VALUE"
  /** A schema id (or a version needed to upgrade from it) that is not registered. */
  | "E_UNKNOWN_SCHEMA"
  /** A schema upgrade function that threw or returned data its schema rejects. */
  | "E_UPGRADE_FAILED"
  /**
   * An incoming block with a commit stamped further ahead of this database's clock than peers'
   * clocks may drift (5 minutes): refused, not clamped (the stamp is signed), and accepted by a
   * later import once the clock has caught up.
   */
  | "E_CLOCK_AHEAD"
  /** An incoming commit that breaks graph rules: unknown parent, parent of another key, clock not after its parent, id reuse, value not matching its schema. */
  | "E_BAD_COMMIT"
  /** A block by a session this database does not trust (see `db.trust`). */
  | "E_UNTRUSTED_SESSION"
  /** No live item with that key. */
  | "E_NOT_FOUND"
  /** `create` with a key that a live item already has. */
  | "E_KEY_EXISTS"
  /** A repository path that is not of the form "/data/todos". */
  | "E_BAD_PATH"
  /** An argument of the wrong shape (e.g. an empty key, an unknown event name). */
  | "E_BAD_ARGUMENT"
  /** Use of a closed database or repository. */
  | "E_CLOSED"
  /** Another process or tab holds the database directory's writer lock. */
  | "E_LOCKED"
  /** A file that is not a Cairn log, checkpoint or settings file (left untouched). */
  | "E_NOT_A_LOG"
  /**
   * A file written by a newer Cairn format version (left untouched), a sync peer speaking no
   * protocol version this one does, or the tabs of a database led by a tab of another release.
   */
  | "E_UNSUPPORTED_VERSION"
  /** A file-system or OPFS operation failed. */
  | "E_IO"
  /** A query's `where` predicate or `sortBy` comparator threw; the thrown value is the `cause`. */
  | "E_QUERY_FAILED"
  /** A sync frame that breaks the protocol: malformed, unknown type, or out of order (docs/sync.md). */
  | "E_PROTOCOL"
  /** A sync handshake whose proof of the session key failed, or a session id not of its key. */
  | "E_AUTH"
  /** A sync request the server's authorization refused: reading or writing a repository. */
  | "E_FORBIDDEN"
  /** A frame or block larger than the connection's limit (`maxFrame`). */
  | "E_TOO_LARGE";

/**
 * Marks Cairn's errors, the same in every copy of Cairn a process holds: the package's Node
 * entries each bundle one (an error of `cairndb/server` meets the `isCairnError` of `cairndb`),
 * and an app may load two versions side by side.
 */
const CAIRN_ERROR: unique symbol = Symbol.for("cairndb.CairnError") as never;

export class CairnError extends Error {
  override readonly name = "CairnError";
  readonly code: CairnErrorCode;

  constructor(code: CairnErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.code = code;
  }

  /** `instanceof CairnError` holds for a CairnError of any copy of Cairn (see CAIRN_ERROR). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // A subclass (the CLI's UnreadableLog) is asked as usual.
    if (this !== CairnError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === "object" && value !== null && CAIRN_ERROR in value;
  }
}
Object.defineProperty(CairnError.prototype, CAIRN_ERROR, { value: true });

/** True when `err` is a CairnError, optionally with the given code. */
export function isCairnError(err: unknown, code?: CairnErrorCode): err is CairnError {
  return err instanceof CairnError && (code === undefined || err.code === code);
}
