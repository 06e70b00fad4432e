/**
 * A CairnError is one for every copy of Cairn in a process: the package's Node entries each bundle
 * their own (an error of "cairndb/server" meets the isCairnError of "cairndb"), and an app may load
 * two versions. On Node, "cairndb" here is the built package and src/ a second copy.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CairnError as PackageCairnError, isCairnError as isPackageCairnError } from "cairndb";
import { CairnError, isCairnError } from "../../src/core/errors.ts";

test("an error of another copy of Cairn is a CairnError to this one, by instanceof and isCairnError, with its code", () => {
  const fromPackage = new PackageCairnError("E_IO", "from the package");
  const fromSources = new CairnError("E_AUTH", "from the sources");
  assert.ok(fromPackage instanceof CairnError);
  assert.ok(fromSources instanceof PackageCairnError);
  assert.ok(isCairnError(fromPackage, "E_IO"));
  assert.ok(isPackageCairnError(fromSources, "E_AUTH"));
  assert.equal(isCairnError(fromPackage, "E_AUTH"), false);

  // A copy of another version: its own class, marked the same way.
  class OtherCopy extends Error {
    readonly code = "E_LOCKED";
  }
  Object.defineProperty(OtherCopy.prototype, Symbol.for("cairndb.CairnError"), { value: true });
  assert.ok(isCairnError(new OtherCopy("held"), "E_LOCKED"));

  for (const other of [new Error("E_IO: plain"), { code: "E_IO" }, null, "E_IO", undefined]) {
    assert.equal(isCairnError(other), false, String(other));
  }
});

test("a subclass of CairnError is told apart as usual", () => {
  class Narrow extends CairnError {}
  const narrow = new Narrow("E_IO", "narrow");
  assert.ok(narrow instanceof Narrow);
  assert.ok(narrow instanceof CairnError);
  assert.equal(new CairnError("E_IO", "wide") instanceof Narrow, false);
});
