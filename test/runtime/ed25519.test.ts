import { test } from "node:test";
import assert from "node:assert/strict";
import { ed25519, nobleEd25519, webCryptoEd25519 } from "../../src/runtime/ed25519.ts";
import { isCairnError } from "../../src/core/errors.ts";
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

test("WebCrypto Ed25519 is available in this runtime and is the one chosen", async () => {
  const webCrypto = await webCryptoEd25519();
  assert.ok(webCrypto, "Deno, Node ≥ 22 and Chromium all support Ed25519 in WebCrypto");
  assert.equal((await ed25519()).implementation, "webcrypto");
});

for (
  const [label, load] of [["webcrypto", ed25519], [
    "noble",
    () => Promise.resolve(nobleEd25519),
  ]] as const
) {
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

test("WebCrypto and noble agree byte for byte (Ed25519 is deterministic)", async () => {
  const webCrypto = (await webCryptoEd25519())!;
  const seed = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);
  const a = await webCrypto.fromSecret(seed);
  const b = await nobleEd25519.fromSecret(seed);
  assert.deepEqual(a.publicKey, b.publicKey);
  const sigA = await webCrypto.sign(a, message);
  const sigB = await nobleEd25519.sign(b, message);
  assert.deepEqual(sigA, sigB);
  assert.equal(await nobleEd25519.verify(a.publicKey, sigA, message), true);
  assert.equal(await webCrypto.verify(b.publicKey, sigB, message), true);
});

test("a known RFC 8032 test vector verifies (test 1: empty message)", async () => {
  const hex = (s: string) => Uint8Array.from(s.match(/../g)!.map((b) => parseInt(b, 16)));
  const secret = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  const publicKey = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  const signature = hex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  );
  const impl = await ed25519();
  const key = await impl.fromSecret(secret);
  assert.deepEqual(key.publicKey, publicKey);
  assert.deepEqual(await impl.sign(key, new Uint8Array()), signature);
  assert.equal(await impl.verify(publicKey, signature, new Uint8Array()), true);
});

test("signs exactly the bytes a view spans, not its whole backing buffer", async () => {
  const impl = await ed25519();
  const key = await impl.generate();
  const pool = new Uint8Array(256).fill(7);
  pool.set(message, 100);
  const view = pool.subarray(100, 100 + message.length);
  const signature = await impl.sign(key, view);
  assert.equal(await nobleEd25519.verify(key.publicKey, signature, message.slice()), true);
  assert.equal(await impl.verify(key.publicKey, signature, Uint8Array.from(message)), true);
});
