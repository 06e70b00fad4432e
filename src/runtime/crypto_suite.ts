/** The runtime's crypto for core code: Ed25519 (runtime/ed25519.ts) and WebCrypto SHA-256. */
import { CairnError } from "../core/errors.ts";
import type { CryptoSuite } from "../core/signing.ts";
import { ed25519 } from "./ed25519.ts";

let resolved: Promise<CryptoSuite> | undefined;

/** The crypto suite of this runtime, resolved once per process. */
export function cryptoSuite(): Promise<CryptoSuite> {
  resolved ??= createSuite();
  return resolved;
}

async function createSuite(): Promise<CryptoSuite> {
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
