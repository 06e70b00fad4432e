/**
 * Ed25519 and SHA-256 through node:crypto, where the runtime has it (Deno and Node). Its calls
 * are synchronous and native; WebCrypto's are asynchronous, each a round trip to another thread,
 * which is most of what a small block costs. Measured on Deno 2.9, 2 cores, per call: SHA-256 of
 * a 200-byte body 3 µs (WebCrypto 26 µs), signing 21 µs (40), verifying 43 µs (62). A write
 * awaited one at a time pays each once. Browsers keep WebCrypto (runtime/crypto_suite.ts).
 *
 * node:crypto is imported through a variable, as node:fs is by the file backend, so browser
 * bundles neither fail on it nor ship it.
 */
import type * as NodeCrypto from "node:crypto";
import { toBase64Url } from "../core/bytes.ts";
import { CairnError } from "../core/errors.ts";
import {
  checkKeyLength,
  type CryptoSuite,
  type Ed25519,
  PUBLIC_KEY_BYTES,
  SIGNATURE_BYTES,
  type SigningKey,
} from "../core/signing.ts";
import { keyFromJwk, pkcs8FromSecret } from "./ed25519.ts";
import { hasNodeModules } from "./platform.ts";

const NODE_CRYPTO = "node:crypto";

/**
 * Whether node:crypto's callback form runs in a thread pool: on Node (libuv's), where a verify
 * takes ~100 µs on the calling thread, ~150 µs alone through the pool, and ~56 µs each when many
 * run at once (2 cores, Node 24). Deno's runs on the calling thread (48 µs either way): not used.
 */
const inThreadPool = !("Deno" in globalThis);

/** Public keys turned into KeyObjects once, not per block; past this many the cache starts over. */
const VERIFY_KEY_CACHE_LIMIT = 1024;

/** node:crypto's suite, or undefined where there is no node:crypto or it lacks Ed25519. */
export async function nodeCryptoSuite(): Promise<CryptoSuite | undefined> {
  // Not even tried in a browser: the failed import would be logged in the page's console.
  if (!hasNodeModules()) return undefined;
  let crypto: typeof NodeCrypto;
  try {
    crypto = await import(NODE_CRYPTO);
    crypto.sign(null, new Uint8Array(1), crypto.generateKeyPairSync("ed25519").privateKey);
  } catch {
    return undefined;
  }
  return {
    ed25519: nodeEd25519(crypto),
    sha256(data) {
      // A plain copy: a digest Buffer may be a view of Node's shared pool.
      return Promise.resolve(new Uint8Array(crypto.createHash("sha256").update(data).digest()));
    },
  };
}

function nodeEd25519(crypto: typeof NodeCrypto): Ed25519 {
  const verifyKeys = new Map<string, NodeCrypto.KeyObject>();

  function signingKey(privateKey: NodeCrypto.KeyObject): SigningKey {
    return keyFromJwk(privateKey.export({ format: "jwk" }), privateKey);
  }

  function verifyKey(publicKey: Uint8Array): NodeCrypto.KeyObject {
    const x = toBase64Url(publicKey);
    let key = verifyKeys.get(x);
    if (key) return key;
    try {
      key = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
    } catch (err) {
      throw new CairnError("E_BAD_KEY", "public key is not a valid Ed25519 key", { cause: err });
    }
    if (verifyKeys.size >= VERIFY_KEY_CACHE_LIMIT) verifyKeys.clear();
    verifyKeys.set(x, key);
    return key;
  }

  return {
    implementation: "node",
    generate() {
      return Promise.resolve(signingKey(crypto.generateKeyPairSync("ed25519").privateKey));
    },
    fromSecret(secret) {
      try {
        const pkcs8 = pkcs8FromSecret(secret);
        const privateKey = crypto.createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
        return Promise.resolve(signingKey(privateKey));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    sign(key, data) {
      const signature = crypto.sign(null, data, key.handle as NodeCrypto.KeyObject);
      return Promise.resolve(new Uint8Array(signature));
    },
    verify(publicKey, signature, data, options) {
      try {
        checkKeyLength(publicKey, PUBLIC_KEY_BYTES, "public key");
        if (signature.length !== SIGNATURE_BYTES) return Promise.resolve(false);
        const key = verifyKey(publicKey);
        if (options?.oneOfMany && inThreadPool) {
          return new Promise((resolve, reject) =>
            crypto.verify(null, data, key, signature, (err, valid) => {
              if (err) reject(err);
              else resolve(valid);
            })
          );
        }
        return Promise.resolve(crypto.verify(null, data, key, signature));
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}
