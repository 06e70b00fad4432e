/**
 * Schema definitions shared by tests, as plain data: each test passes them to the `defineSchema`
 * it imports ("cairndb" — the built package on Node — or the sources), since a schema object made
 * by one copy of the library is not accepted by another.
 */

/** One field of every type; `title` is the only required field. */
export const ALL_TYPES = {
  ns: "all",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    rank: { type: "number" },
    done: { type: "boolean" },
    due: { type: "date" },
    tags: { type: "set" },
    meta: { type: "map" },
    notes: { type: "text" },
    likes: { type: "counter" },
  },
  indexes: ["rank"],
} as const;
