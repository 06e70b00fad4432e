/**
 * Errors a server names by code (`error`, `denied`, an ack's rejections) become CairnErrors with
 * that code when it is one of Cairn's, E_PROTOCOL otherwise: the code is hostile input too, and a
 * caller branching on `err.code` must only ever see codes the type declares.
 */
import { CairnError, type CairnErrorCode } from "../core/errors.ts";

/** Every code, as a record so the compiler insists on each one. */
const CODES: Record<CairnErrorCode, true> = {
  E_CORRUPT_ENCODING: true,
  E_BAD_SIGNATURE: true,
  E_BAD_KEY: true,
  E_CRYPTO_UNAVAILABLE: true,
  E_CHAIN_GAP: true,
  E_CHAIN_FORK: true,
  E_CHAIN_STALE: true,
  E_BAD_SCHEMA: true,
  E_UNKNOWN_FIELD: true,
  E_WRONG_TYPE: true,
  E_REQUIRED_FIELD: true,
  E_INVALID_VALUE: true,
  E_UNKNOWN_SCHEMA: true,
  E_UPGRADE_FAILED: true,
  E_CLOCK_AHEAD: true,
  E_BAD_COMMIT: true,
  E_UNTRUSTED_SESSION: true,
  E_NOT_FOUND: true,
  E_KEY_EXISTS: true,
  E_BAD_PATH: true,
  E_BAD_ARGUMENT: true,
  E_CLOSED: true,
  E_LOCKED: true,
  E_NOT_A_LOG: true,
  E_UNSUPPORTED_VERSION: true,
  E_IO: true,
  E_QUERY_FAILED: true,
  E_PROTOCOL: true,
  E_AUTH: true,
  E_FORBIDDEN: true,
  E_TOO_LARGE: true,
};

/** A CairnError for a code and message a server sent, prefixed with what it was about. */
export function remoteError(code: string, message: string, about: string): CairnError {
  if (Object.hasOwn(CODES, code)) {
    return new CairnError(code as CairnErrorCode, `${about}: ${message}`);
  }
  return new CairnError("E_PROTOCOL", `${about}: unknown error code ${code}: ${message}`);
}
