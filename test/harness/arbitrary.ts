/** fast-check generators for Cairn's data shapes, shared by property tests. */
import fc from "fast-check";
import type { Commit, FieldRecord, WireValue } from "../../src/core/commit.ts";

export const wireValue: fc.Arbitrary<WireValue> = fc.letrec<{ value: WireValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
    fc.integer(),
    fc.string(),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie("value"), { maxKeys: 4, noNullPrototype: true }),
  ),
})).value;

export const fieldRecord: fc.Arbitrary<FieldRecord> = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 12 }).filter((k) => k !== "__proto__"),
  wireValue,
  { maxKeys: 6, noNullPrototype: true },
);

const sessionId = fc.stringMatching(/^[A-Za-z0-9_-]{1,22}$/);
const commitIdArb = fc.tuple(sessionId, fc.integer({ min: 1, max: 1e9 })).map(([s, n]) =>
  `${s}.${n}`
);

export const commit: fc.Arbitrary<Commit> = fc.record({
  session: sessionId,
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  key: fc.string({ maxLength: 40 }),
  hlc: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  parents: fc.array(commitIdArb, { maxLength: 4 }),
  schema: fc.stringMatching(/^[a-z]{1,10}@[1-9][0-9]{0,2}$/),
}, { noNullPrototype: true }).chain((header) =>
  fc.oneof(
    fieldRecord.map((value) => ({ kind: "value" as const, value })),
    fc.record(
      { set: fieldRecord, unset: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }) },
      {
        noNullPrototype: true,
      },
    )
      .map(({ set, unset }) => ({ kind: "delta" as const, set, unset })),
    fc.constant({ kind: "delete" as const }),
  ).map((body): Commit => ({ ...header, ...body }))
);
