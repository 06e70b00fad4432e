/**
 * A local write naming its schema id as text (the CLI's import does) is refused when the id holds a
 * lone surrogate: sealed, the block would read back only here (every other reader refuses it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { TITLE_AND_BODY } from "../harness/schemas.ts";
import { trustedRepository } from "../harness/repositories.ts";

test("create and writeValue refuse a schema id with a lone surrogate and write nothing", async () => {
  const Doc = defineSchema(TITLE_AND_BODY);
  const repo = trustedRepository("/docs", "s1", Doc);
  const refused = (error: unknown) => isCairnError(error) && error.code === "E_BAD_ARGUMENT";
  assert.throws(() => repo.create("a", "doc\ud800@1", { title: "t" }), refused);
  repo.create("b", Doc.id, Doc.createWire({ title: "t", body: "" }));
  assert.throws(() => repo.writeValue("b", "doc\udc00@1", { title: "u" }), refused);
  await repo.flush();
  assert.equal(repo.value("a"), undefined);
  assert.equal(repo.value("b")?.schema, Doc.id);
  assert.equal(repo.count(), 1);
});
