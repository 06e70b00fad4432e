import { test } from "node:test";
import assert from "node:assert/strict";
import { fromBase64Url, toBase64Url } from "../../src/core/bytes.ts";
import { seededRandom } from "../harness/random.ts";

test("base64url: the same text as btoa with URL digits and no padding, for every length; decodes back", () => {
  const random = seededRandom(20261125);
  for (let length = 0; length < 70; length++) {
    for (let round = 0; round < 20; round++) {
      const bytes = Uint8Array.from({ length }, () => Math.floor(random() * 256));
      const reference = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
        .replace(/=+$/, "");
      assert.equal(toBase64Url(bytes), reference, `length ${length}`);
      assert.deepEqual(fromBase64Url(toBase64Url(bytes)), bytes);
    }
  }
});
