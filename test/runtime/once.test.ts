import { test } from "node:test";
import assert from "node:assert/strict";
import { onceUnlessFailed } from "../../src/runtime/once.ts";

test("made once and shared; a failure is not kept, the next call makes it again", async () => {
  let calls = 0;
  const get = onceUnlessFailed(() => {
    calls++;
    return calls === 1 ? Promise.reject(new Error("lost chunk")) : Promise.resolve({ calls });
  });
  await assert.rejects(get(), /lost chunk/);
  const [first, second] = await Promise.all([get(), get()]);
  assert.equal(first, second, "callers share one made value");
  assert.equal(await get(), first);
  assert.equal(calls, 2);
});
