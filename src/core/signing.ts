/**
 * The signing interface core code is written against. Implementations live in
 * runtime/node_crypto.ts (Deno, Node) and runtime/ed25519.ts (WebCrypto, or @noble/ed25519
 * where WebCrypto lacks Ed25519).
 */
import { CairnError } from "./errors.ts";

export const PUBLIC_KEY_BYTES = 32;
export const SECRET_KEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;
/** A SHA-256 digest: what a block's hash and a checkpoint's seal are made of. */
export const DIGEST_BYTES = 32;

/** Throws E_BAD_KEY unless `bytes` is a Uint8Array of the `expected` length. */
export function checkKeyLength(bytes: Uint8Array, expected: number, what: string): void {
  if (!(bytes instanceof Uint8Array) || bytes.length !== expected) {
    throw new CairnError("E_BAD_KEY", `${what} must be ${expected} bytes`);
  }
}

/** A key pair able to sign. `secret` is the 32-byte seed: store it to reopen as the same session. */
export interface SigningKey {
  readonly publicKey: Uint8Array;
  readonly secret: Uint8Array;
  /** Implementation-specific handle (a CryptoKey for WebCrypto). */
  readonly handle: unknown;
}

export interface Ed25519 {
  readonly implementation: "node" | "webcrypto" | "noble";
  generate(): Promise<SigningKey>;
  /** Rebuilds a key pair from its 32-byte secret seed. */
  fromSecret(secret: Uint8Array): Promise<SigningKey>;
  sign(key: SigningKey, data: Uint8Array): Promise<Uint8Array>;
  /**
   * False for a signature that does not match; throws E_BAD_KEY for an unusable public key.
   * `oneOfMany`: the caller has several verifications under way at once, so an implementation
   * that can check them off this thread, in parallel, should (slower for one alone).
   */
  verify(
    publicKey: Uint8Array,
    signature: Uint8Array,
    data: Uint8Array,
    options?: VerifyOptions,
  ): Promise<boolean>;
}

export interface VerifyOptions {
  readonly oneOfMany?: boolean;
}

/** The crypto a repository needs, resolved once per runtime (runtime/crypto_suite.ts). */
export interface CryptoSuite {
  readonly ed25519: Ed25519;
  sha256(data: Uint8Array): Promise<Uint8Array>;
}
