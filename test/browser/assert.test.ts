/**
 * The assertions the browser bundle hands test files for `node:assert/strict` (the npm package
 * "assert", scripts/lib/bundles.ts) behave as Node's own: strict comparisons, patterns tested
 * against an error's "Name: message", and a failure that is an AssertionError naming both values
 * (not a ReferenceError from a Node global the page lacks). Browser only: on Deno and Node the
 * import is Node's module itself.
 */
import { test } from "node:test";
import assert from "node:assert/strict";

/** What `fn` threw, or a failure if it threw nothing. */
function thrownBy(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return assert.fail("expected a throw");
}

test("assert: equal and deepEqual are strict, as node:assert/strict", () => {
  assert.throws(() => assert.equal(1 as unknown, "1"), { code: "ERR_ASSERTION" });
  assert.throws(() => assert.deepEqual({ n: 1 }, { n: "1" }), { code: "ERR_ASSERTION" });
  assert.throws(() => assert.deepEqual(new Uint8Array([1]), [1]), { code: "ERR_ASSERTION" });
  assert.deepEqual(new Map([["k", { n: 1 }]]), new Map([["k", { n: 1 }]]));
});

test("assert: throws and rejects test a pattern against the error's Name: message", async () => {
  assert.throws(() => {
    throw new TypeError("bad input");
  }, /^TypeError: bad input$/);
  await assert.rejects(Promise.reject(new RangeError("too far")), /^RangeError: too far$/);
  // The message alone does not match. (Node wraps the miss in an AssertionError; the package,
  // ported from an older Node, throws the error itself: either way the test fails.)
  thrownBy(() =>
    assert.throws(() => {
      throw new TypeError("bad input");
    }, /^bad input$/)
  );
});

test("assert: a failed comparison is an AssertionError that shows both values", () => {
  const err = thrownBy(() => assert.deepEqual({ title: "left" }, { title: "right" })) as Error & {
    code?: string;
  };
  assert.equal(err.name, "AssertionError");
  assert.equal(err.code, "ERR_ASSERTION");
  assert.match(err.message, /left/);
  assert.match(err.message, /right/);
});
