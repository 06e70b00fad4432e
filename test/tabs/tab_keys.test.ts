/**
 * The pool of tab keys (src/tabs/tab_keys.ts): key 0 is the stored session's secret, the others
 * are derived from it, all different, the same every time, and bounded to MAX_TABS.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { toBase64Url } from "../../src/core/bytes.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { MAX_TABS, tabSecret } from "../../src/tabs/tab_keys.ts";

test("tab key 0 is the stored secret; every other index derives its own, the same each time", async () => {
  const suite = await cryptoSuite();
  const stored = (await suite.ed25519.generate()).secret;
  const secrets = [];
  for (let index = 0; index < MAX_TABS; index++) {
    secrets.push(toBase64Url(await tabSecret(suite, stored, index)));
  }
  assert.equal(secrets[0], toBase64Url(stored));
  assert.equal(new Set(secrets).size, MAX_TABS, "every index has its own key");
  assert.equal(toBase64Url(await tabSecret(suite, stored, 5)), secrets[5], "derived again alike");
  const other = (await suite.ed25519.generate()).secret;
  assert.notEqual(toBase64Url(await tabSecret(suite, other, 5)), secrets[5]);
  // Each derived secret is a usable Ed25519 seed.
  const key = await suite.ed25519.fromSecret(await tabSecret(suite, stored, 3));
  assert.equal(key.publicKey.length, 32);
});

test("a tab key index outside the pool is E_BAD_ARGUMENT", async () => {
  const suite = await cryptoSuite();
  const stored = new Uint8Array(32).fill(1);
  for (const index of [-1, MAX_TABS, 1.5, NaN]) {
    await assert.rejects(
      tabSecret(suite, stored, index),
      (err) => isCairnError(err) && err.code === "E_BAD_ARGUMENT",
    );
  }
});
