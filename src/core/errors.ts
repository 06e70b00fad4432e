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
  | "E_CRYPTO_UNAVAILABLE";

export class CairnError extends Error {
  override readonly name = "CairnError";
  readonly code: CairnErrorCode;

  constructor(code: CairnErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.code = code;
  }
}

/** True when `err` is a CairnError, optionally with the given code. */
export function isCairnError(err: unknown, code?: CairnErrorCode): err is CairnError {
  return err instanceof CairnError && (code === undefined || err.code === code);
}
