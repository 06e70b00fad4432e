/**
 * The runtime's crypto for core code: node:crypto where there is one (Deno, Node: synchronous,
 * see node_crypto.ts), else WebCrypto SHA-256 with the best Ed25519 of runtime/ed25519.ts.
 */
import { CairnError } from "../core/errors.ts";
import type { CryptoSuite } from "../core/signing.ts";
import { ed25519 } from "./ed25519.ts";
import { nodeCryptoSuite } from "./node_crypto.ts";
import { onceUnlessFailed } from "./once.ts";

/** The crypto suite of this runtime, resolved once per process. */
export const cryptoSuite: () => Promise<CryptoSuite> = onceUnlessFailed(createSuite);

async function createSuite(): Promise<CryptoSuite> {
  return await nodeCryptoSuite() ?? await webCryptoSuite();
}

/** WebCrypto SHA-256 with the best Ed25519 of runtime/ed25519.ts. */
export async function webCryptoSuite(): Promise<CryptoSuite> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    throw new CairnError("E_CRYPTO_UNAVAILABLE", "this runtime has no WebCrypto for SHA-256");
  }
  return {
    ed25519: await ed25519(),
    async sha256(data) {
      // Digest the view itself: `.slice().buffer` of a Node Buffer would hash its whole pool.
      return new Uint8Array(await subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>));
    },
  };
}
