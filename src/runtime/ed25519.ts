/**
 * Ed25519 signing behind one small interface: WebCrypto (Chromium, and any runtime with it but
 * without node:crypto: 40–160 µs per operation) and @noble/ed25519 for runtimes without either
 * (6–25× slower, noble_ed25519.ts, loaded only where it is used). Deno and Node use node:crypto
 * instead (node_crypto.ts). All produce identical bytes: Ed25519 is deterministic.
 */
import { fromBase64Url } from "../core/bytes.ts";
import { CairnError } from "../core/errors.ts";
import { nobleEd25519 } from "./noble_ed25519.ts";
import { onceUnlessFailed } from "./once.ts";
import {
  checkKeyLength,
  type Ed25519,
  PUBLIC_KEY_BYTES,
  SECRET_KEY_BYTES,
  SIGNATURE_BYTES,
  type SigningKey,
} from "../core/signing.ts";

export type { Ed25519, SigningKey };

// DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows it.
const PKCS8_ED25519_PREFIX = new Uint8Array([
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x70,
  0x04,
  0x22,
  0x04,
  0x20,
]);
const ALGORITHM = { name: "Ed25519" } as const;
/** Imported verify keys kept per public key, so a peer's key is imported once, not per block. */
const VERIFY_KEY_CACHE_LIMIT = 1024;

/** The PKCS#8 DER form of a 32-byte secret seed, as key imports take it. */
export function pkcs8FromSecret(secret: Uint8Array): Uint8Array {
  checkKeyLength(secret, SECRET_KEY_BYTES, "secret key");
  const pkcs8 = new Uint8Array(PKCS8_ED25519_PREFIX.length + SECRET_KEY_BYTES);
  pkcs8.set(PKCS8_ED25519_PREFIX);
  pkcs8.set(secret, PKCS8_ED25519_PREFIX.length);
  return pkcs8;
}

/** A signing key from the JWK export of a private key (`x`: public key, `d`: secret seed). */
export function keyFromJwk(jwk: { x?: string; d?: string }, handle: unknown): SigningKey {
  const publicKey = jwk.x ? fromBase64Url(jwk.x) : undefined;
  const secret = jwk.d ? fromBase64Url(jwk.d) : undefined;
  if (!publicKey || !secret) throw new CairnError("E_BAD_KEY", "exported key lacks its parts");
  return { publicKey, secret, handle };
}

/**
 * WebCrypto reads exactly the bytes a view spans, so pass the view itself. Never `.slice().buffer`:
 * on a Node Buffer (what node:crypto and node:fs return on Deno and Node, and the binary values
 * read from them) `.slice()` is a view of a larger pool, and its `.buffer` would sign the whole
 * pool.
 */
function view(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes as Uint8Array<ArrayBuffer>;
}

function createWebCryptoEd25519(subtle: SubtleCrypto): Ed25519 {
  const verifyKeys = new Map<string, CryptoKey>();

  async function keyFromPrivate(privateKey: CryptoKey): Promise<SigningKey> {
    return keyFromJwk(await subtle.exportKey("jwk", privateKey), privateKey);
  }

  async function verifyKey(publicKey: Uint8Array): Promise<CryptoKey> {
    const cacheKey = String.fromCharCode(...publicKey);
    let key = verifyKeys.get(cacheKey);
    if (key) return key;
    try {
      key = await subtle.importKey("raw", view(publicKey), ALGORITHM, false, ["verify"]);
    } catch (err) {
      throw new CairnError("E_BAD_KEY", "public key is not a valid Ed25519 point", { cause: err });
    }
    if (verifyKeys.size >= VERIFY_KEY_CACHE_LIMIT) verifyKeys.clear();
    verifyKeys.set(cacheKey, key);
    return key;
  }

  return {
    implementation: "webcrypto",
    async generate() {
      const pair = await subtle.generateKey(ALGORITHM, true, ["sign", "verify"]) as CryptoKeyPair;
      return keyFromPrivate(pair.privateKey);
    },
    async fromSecret(secret) {
      const pkcs8 = view(pkcs8FromSecret(secret));
      const privateKey = await subtle.importKey("pkcs8", pkcs8, ALGORITHM, true, ["sign"]);
      return keyFromPrivate(privateKey);
    },
    async sign(key, data) {
      return new Uint8Array(await subtle.sign(ALGORITHM, key.handle as CryptoKey, view(data)));
    },
    async verify(publicKey, signature, data) {
      checkKeyLength(publicKey, PUBLIC_KEY_BYTES, "public key");
      if (signature.length !== SIGNATURE_BYTES) return false;
      return subtle.verify(ALGORITHM, await verifyKey(publicKey), view(signature), view(data));
    },
  };
}

/** WebCrypto Ed25519 if `subtle` (a runtime's `crypto.subtle`) supports it, else undefined. */
export async function webCryptoEd25519(
  subtle: SubtleCrypto | undefined,
): Promise<Ed25519 | undefined> {
  if (!subtle) return undefined;
  try {
    await subtle.generateKey(ALGORITHM, false, ["sign", "verify"]);
  } catch {
    return undefined;
  }
  return createWebCryptoEd25519(subtle);
}

/** WebCrypto's Ed25519 through `subtle` where it has one, else @noble/ed25519's. */
export async function fastestEd25519(subtle: SubtleCrypto | undefined): Promise<Ed25519> {
  return await webCryptoEd25519(subtle) ?? await nobleEd25519();
}

/** The fastest Ed25519 this runtime offers (probed once per process). */
export const ed25519: () => Promise<Ed25519> = onceUnlessFailed(() =>
  fastestEd25519(globalThis.crypto?.subtle)
);
