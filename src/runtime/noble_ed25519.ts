/**
 * Ed25519 in pure JavaScript (@noble/ed25519), for runtimes with neither node:crypto nor Ed25519 in
 * WebCrypto (runtime/ed25519.ts picks). The library is imported dynamically, when first asked for:
 * a page whose browser signs with WebCrypto never loads its 7.5 KB (minified) if the app's bundler
 * splits code, as Vite and `esbuild --splitting` do.
 */
import { CairnError } from "../core/errors.ts";
import {
  checkKeyLength,
  type Ed25519,
  PUBLIC_KEY_BYTES,
  SECRET_KEY_BYTES,
  SIGNATURE_BYTES,
} from "../core/signing.ts";

type Noble = typeof import("@noble/ed25519");

/**
 * The pure-JavaScript implementation, with @noble/ed25519 loaded by `load` (a parameter for
 * tests). A load that fails (the app's chunk lost on the network, a CSP refusing it) is
 * E_CRYPTO_UNAVAILABLE naming what failed to load.
 */
export async function nobleEd25519(
  load: () => Promise<Noble> = () => import("@noble/ed25519"),
): Promise<Ed25519> {
  let noble: Noble;
  try {
    noble = await load();
  } catch (err) {
    throw new CairnError(
      "E_CRYPTO_UNAVAILABLE",
      "this runtime has no Ed25519 in WebCrypto, and its fallback, @noble/ed25519, did not load " +
        `(${(err as Error)?.message ?? err})`,
      { cause: err },
    );
  }
  return {
    implementation: "noble",
    async generate() {
      const secret = noble.utils.randomSecretKey();
      return { publicKey: await noble.getPublicKeyAsync(secret), secret, handle: secret };
    },
    async fromSecret(secret) {
      checkKeyLength(secret, SECRET_KEY_BYTES, "secret key");
      const copy = secret.slice();
      return { publicKey: await noble.getPublicKeyAsync(copy), secret: copy, handle: copy };
    },
    sign(key, data) {
      return noble.signAsync(data, key.secret);
    },
    async verify(publicKey, signature, data) {
      checkKeyLength(publicKey, PUBLIC_KEY_BYTES, "public key");
      if (signature.length !== SIGNATURE_BYTES) return false;
      try {
        return await noble.verifyAsync(signature, data, publicKey);
      } catch (err) {
        throw new CairnError("E_BAD_KEY", "public key is not a valid Ed25519 point", {
          cause: err,
        });
      }
    },
  };
}
