import { test } from "node:test";
import assert from "node:assert/strict";
import { ed25519, fastestEd25519, webCryptoEd25519 } from "../../src/runtime/ed25519.ts";
import { nobleEd25519 } from "../../src/runtime/noble_ed25519.ts";
import { nodeCryptoSuite } from "../../src/runtime/node_crypto.ts";
import { cryptoSuite, webCryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { isCairnError } from "../../src/core/errors.ts";
import type { Ed25519 } from "../../src/core/signing.ts";
import { encodeCommit } from "../../src/core/commit_codec.ts";

const message = encodeCommit({
  session: "s1",
  seq: 1,
  key: "k",
  hlc: 1,
  parents: [],
  schema: "t@1",
  kind: "value",
  value: { title: "hello" },
});

/** Deno and Node have node:crypto; a browser page does not. */
const serverRuntime = "Deno" in globalThis || "process" in globalThis && "versions" in process;

test("the runtime's suite: node:crypto on Deno and Node, WebCrypto in a browser", async () => {
  const webCrypto = await webCryptoEd25519(globalThis.crypto.subtle);
  assert.ok(webCrypto, "Deno, Node ≥ 22 and Chromium all support Ed25519 in WebCrypto");
  assert.equal((await ed25519()).implementation, "webcrypto");
  const node = await nodeCryptoSuite();
  assert.equal(node !== undefined, serverRuntime);
  assert.equal((await cryptoSuite()).ed25519.implementation, serverRuntime ? "node" : "webcrypto");
});

test("the suites hash alike: SHA-256 of the same bytes, also from a view into a larger buffer", async () => {
  const suites = [await webCryptoSuite(), await nodeCryptoSuite()].filter((s) => s !== undefined);
  const pool = new Uint8Array(300).fill(9);
  pool.set(message, 100);
  const view = pool.subarray(100, 100 + message.length);
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  for (const suite of suites) {
    const digest = await suite.sha256(new TextEncoder().encode("abc"));
    assert.equal([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""), abc);
    assert.deepEqual(await suite.sha256(view), await suite.sha256(message.slice()));
    assert.equal(digest.byteOffset, 0);
    assert.equal(digest.buffer.byteLength, 32, "a digest owns its buffer");
  }
});

test("where WebCrypto has no Ed25519 (or no WebCrypto at all), @noble/ed25519 signs alike", async () => {
  const subtle = globalThis.crypto.subtle;
  // A WebCrypto of the browsers before Ed25519 came to it: everything else works.
  const withoutEd25519 = new Proxy(subtle, {
    get(target, name) {
      if (name !== "generateKey") return Reflect.get(target, name).bind(target);
      return () => Promise.reject(new DOMException("Unrecognized name", "NotSupportedError"));
    },
  });
  const webCrypto = await fastestEd25519(subtle);
  const secret = new Uint8Array(32).fill(3);
  const expected = await webCrypto.sign(await webCrypto.fromSecret(secret), message);
  for (const lacking of [withoutEd25519, undefined]) {
    const fallback = await fastestEd25519(lacking);
    assert.equal(fallback.implementation, "noble");
    const key = await fallback.fromSecret(secret);
    assert.deepEqual(await fallback.sign(key, message), expected);
    assert.equal(await webCrypto.verify(key.publicKey, expected, message), true);
  }
  assert.equal(webCrypto.implementation, "webcrypto");
});

test("a fallback signer that fails to load is E_CRYPTO_UNAVAILABLE, with the cause", async () => {
  const lost = new TypeError("Failed to fetch dynamically imported module: /assets/ed25519.js");
  await assert.rejects(nobleEd25519(() => Promise.reject(lost)), (err: unknown) => {
    assert.ok(isCairnError(err, "E_CRYPTO_UNAVAILABLE"));
    assert.match(err.message, /@noble\/ed25519, did not load \(Failed to fetch/);
    assert.equal(err.cause, lost);
    return true;
  });
});

const implementations: [string, () => Promise<Ed25519>][] = [
  ["webcrypto", ed25519],
  ["noble", () => nobleEd25519()],
];
const node = await nodeCryptoSuite();
if (node) implementations.push(["node", () => Promise.resolve(node.ed25519)]);

for (const [label, load] of implementations) {
  test(`${label}: sign then verify round-trips; a changed byte or other key fails`, async () => {
    const impl = await load();
    const key = await impl.generate();
    assert.equal(key.publicKey.length, 32);
    assert.equal(key.secret.length, 32);
    const signature = await impl.sign(key, message);
    assert.equal(signature.length, 64);
    assert.equal(await impl.verify(key.publicKey, signature, message), true);

    const tampered = message.slice();
    tampered[5] ^= 0x01;
    assert.equal(await impl.verify(key.publicKey, signature, tampered), false);
    const badSignature = signature.slice();
    badSignature[10] ^= 0x80;
    assert.equal(await impl.verify(key.publicKey, badSignature, message), false);
    const other = await impl.generate();
    assert.equal(await impl.verify(other.publicKey, signature, message), false);
    assert.equal(await impl.verify(key.publicKey, signature.subarray(0, 63), message), false);
  });

  test(`${label}: many verifications at once (oneOfMany) give each its own answer`, async () => {
    const impl = await load();
    const key = await impl.generate();
    const signature = await impl.sign(key, message);
    const tampered = message.slice();
    tampered[5] ^= 0x01;
    const many = { oneOfMany: true };
    const answers = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) => impl.verify(key.publicKey, signature, i % 3 === 1 ? tampered : message, many),
      ),
    );
    assert.deepEqual(answers, Array.from({ length: 40 }, (_, i) => i % 3 !== 1));
    await assert.rejects(
      impl.verify(key.publicKey.subarray(0, 31), signature, message, many),
      (err) => isCairnError(err, "E_BAD_KEY"),
    );
  });

  test(`${label}: a key rebuilt from its secret is the same session`, async () => {
    const impl = await load();
    const key = await impl.generate();
    const again = await impl.fromSecret(key.secret);
    assert.deepEqual(again.publicKey, key.publicKey);
    assert.deepEqual(await impl.sign(again, message), await impl.sign(key, message));
  });

  test(`${label}: malformed keys are typed E_BAD_KEY errors`, async () => {
    const impl = await load();
    const key = await impl.generate();
    const signature = await impl.sign(key, message);
    await assert.rejects(
      impl.verify(key.publicKey.subarray(0, 31), signature, message),
      (err) => isCairnError(err, "E_BAD_KEY"),
    );
    await assert.rejects(
      impl.fromSecret(new Uint8Array(16)),
      (err) => isCairnError(err, "E_BAD_KEY"),
    );
  });
}

test(`${implementations.map(([label]) => label).join(", ")} agree byte for byte (Ed25519 is deterministic)`, async () => {
  const seed = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);
  const keys = [];
  for (const [, load] of implementations) {
    const impl = await load();
    keys.push({ impl, key: await impl.fromSecret(seed) });
  }
  const [first, ...others] = keys;
  const signature = await first.impl.sign(first.key, message);
  for (const { impl, key } of others) {
    assert.deepEqual(key.publicKey, first.key.publicKey);
    assert.deepEqual(await impl.sign(key, message), signature);
    assert.equal(await impl.verify(first.key.publicKey, signature, message), true);
  }
});

for (const [label, load] of implementations) {
  test(`${label}: a known RFC 8032 test vector verifies (test 1: empty message)`, async () => {
    const hex = (s: string) => Uint8Array.from(s.match(/../g)!.map((b) => parseInt(b, 16)));
    const secret = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
    const publicKey = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    const signature = hex(
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    );
    const impl = await load();
    const key = await impl.fromSecret(secret);
    assert.deepEqual(key.publicKey, publicKey);
    assert.deepEqual(await impl.sign(key, new Uint8Array()), signature);
    assert.equal(await impl.verify(publicKey, signature, new Uint8Array()), true);
  });

  test(`${label}: signs exactly the bytes a view spans, into a signature of its own`, async () => {
    const impl = await load();
    const key = await impl.generate();
    const pool = new Uint8Array(256).fill(7);
    pool.set(message, 100);
    const view = pool.subarray(100, 100 + message.length);
    const signature = await impl.sign(key, view);
    assert.equal(signature.buffer.byteLength, 64, "a signature owns its buffer");
    assert.equal(
      await (await nobleEd25519()).verify(key.publicKey, signature, message.slice()),
      true,
    );
    assert.equal(await impl.verify(key.publicKey, signature, Uint8Array.from(message)), true);
  });
}
