/**
 * Schema definitions shared by tests, as plain data: each test passes them to the `defineSchema`
 * it imports ("cairndb" — the built package on Node — or the sources), since a schema object made
 * by one copy of the library is not accepted by another. A test's own schema stays in the test
 * when it is there for that test's point (versions and upgrades, odd or invalid definitions).
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

/** A to-do with every field type and `done` defaulting to false: the item API and merging. */
export const TASK = {
  ns: "task",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    done: { type: "boolean", default: false },
    rank: { type: "number" },
    due: { type: "date" },
    tags: { type: "set" },
    meta: { type: "map" },
    notes: { type: "text" },
    likes: { type: "counter" },
  },
} as const;

/** One optional string: for tests that need items to write and nothing of their fields. */
export const OPTIONAL_TITLE = {
  ns: "note",
  version: 1,
  fields: { title: { type: "string" } },
} as const;

/** One required string: for tests of opening, repairing and storing a few plain items. */
export const REQUIRED_TITLE = {
  ns: "doc",
  version: 1,
  fields: { title: { type: "string", required: true } },
} as const;

/** A required title and a number `n` to edit: for tests that write, damage and reopen logs. */
export const TITLE_AND_NUMBER = {
  ns: "note",
  version: 1,
  fields: { title: { type: "string", required: true }, n: { type: "number" } },
} as const;

/** A required title and a collaborative text `body`: for text editing and syncing tests. */
export const TITLE_AND_BODY = {
  ns: "doc",
  version: 1,
  fields: { title: { type: "string", required: true }, body: { type: "text" } },
} as const;

/** A required title, a set of tags and a text body: for merging and storage round trips. */
export const TITLE_TAGS_BODY = {
  ns: "note",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    tags: { type: "set" },
    body: { type: "text" },
  },
} as const;

/** A required title and a `done` flag: the to-do list the React tests render, filtered on done. */
export const TITLE_AND_DONE = {
  ns: "task",
  version: 1,
  fields: { title: { type: "string", required: true }, done: { type: "boolean" } },
} as const;

/** A required title and a `count` to filter and sort on: for live query tests. */
export const TITLE_AND_COUNT = {
  ns: "entry",
  version: 1,
  fields: { title: { type: "string", required: true }, count: { type: "number" } },
} as const;
