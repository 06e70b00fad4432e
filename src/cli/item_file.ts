/**
 * The file `cairndb export` writes and `cairndb import` reads: items as plain JSON, each with its
 * key, schema id and value in its JSON-compatible wire form (docs/cli.md):
 *
 *   {"cairn":"items","version":1,"repositories":{"/todos":[
 *     {"key":"a1","schema":"todo@1","value":{"title":"buy milk","done":false}}]}}
 *
 * Read as hostile input: the whole file is checked before anything is imported.
 */
import { CairnError, isCairnError } from "../core/errors.ts";
import type { FieldRecord } from "../core/commit.ts";
import { assertFieldRecord, assertNonEmptyString, isPlainObject } from "../core/wire_validation.ts";
import { checkNewKey } from "../db/arguments.ts";
import { checkRepositoryPath } from "../core/repository_path.ts";

export const ITEM_FILE_KIND = "items";
export const ITEM_FILE_VERSION = 1;

export interface ExportedItem {
  readonly key: string;
  readonly schema: string;
  readonly value: FieldRecord;
}

/** Repository path → its live items. */
export type ExportedRepositories = Record<string, readonly ExportedItem[]>;

export function formatItemFile(repositories: ExportedRepositories): string {
  const parts = Object.entries(repositories).map(([path, items]) =>
    `${JSON.stringify(path)}:[${items.map((item) => `\n  ${JSON.stringify(item)}`).join(",")}\n]`
  );
  return `{"cairn":"${ITEM_FILE_KIND}","version":${ITEM_FILE_VERSION},"repositories":{` +
    `${parts.join(",\n")}}}\n`;
}

/**
 * The repositories of an item file. E_CORRUPT_ENCODING, naming the place, for anything that is
 * not one (not UTF-8 JSON, a missing or wrong field, a value that is not a wire value, a key
 * given twice in one repository); E_UNSUPPORTED_VERSION for a newer version.
 */
export function parseItemFile(bytes: Uint8Array): ExportedRepositories {
  let json: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    json = JSON.parse(text);
  } catch (err) {
    corrupt(`not an item file: ${(err as Error).message}`);
  }
  const repeated = repeatedName(text);
  if (repeated !== undefined) {
    // JSON.parse keeps the last of two equal names: a repository given twice (two exports joined
    // by hand) lost the items of the first with nothing said.
    corrupt(`${JSON.stringify(repeated)} is given twice in one object`);
  }
  if (!isPlainObject(json) || json.cairn !== ITEM_FILE_KIND) {
    corrupt(`not an item file: no "cairn": "items"`);
  }
  if (json.version !== ITEM_FILE_VERSION) {
    throw new CairnError(
      "E_UNSUPPORTED_VERSION",
      `item file version ${String(json.version)}; this Cairn reads version ${ITEM_FILE_VERSION}`,
    );
  }
  if (!isPlainObject(json.repositories)) {
    corrupt("repositories: expected an object");
  }
  const repositories: Record<string, ExportedItem[]> = {};
  for (const [path, items] of Object.entries(json.repositories)) {
    refusedAs("repositories", () => checkRepositoryPath(path));
    const where = `repositories[${JSON.stringify(path)}]`;
    if (!Array.isArray(items)) corrupt(`${where}: expected an array`);
    const keys = new Set<string>();
    repositories[path] = items.map((item: unknown, i) => {
      const at = `${where}[${i}]`;
      if (!isPlainObject(item)) corrupt(`${at}: expected an object`);
      const key = refusedAs(`${at}.key`, () => checkNewKey(item.key));
      assertNonEmptyString(item.schema, `${at}.schema`);
      if (!SCHEMA_ID.test(item.schema)) {
        corrupt(`${at}.schema: not a schema id (namespace@version)`);
      }
      checkStrings(item.schema, `${at}.schema`);
      assertFieldRecord(item.value, `${at}.value`);
      checkStrings(item.value, `${at}.value`);
      checkLists(item.value, `${at}.value`);
      if (keys.has(key)) corrupt(`${at}.key: ${key} is given twice`);
      keys.add(key);
      return { key, schema: item.schema, value: item.value };
    });
  }
  return repositories;
}

/**
 * The first name that one object of the JSON text `text` (already parsed: well-formed) gives
 * twice, if any.
 */
function repeatedName(text: string): string | undefined {
  // Per open container: an object's names so far, or null for an array.
  const open: (Set<string> | null)[] = [];
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) { // a string: find its end, past escaped characters
      let end = i + 1;
      let escaped = false;
      while (text.charCodeAt(end) !== 0x22) {
        if (text.charCodeAt(end) === 0x5c) {
          escaped = true;
          end++;
        }
        end++;
      }
      if (nameNext) {
        const name = escaped
          ? JSON.parse(text.slice(i, end + 1)) as string
          : text.slice(i + 1, end);
        const names = open[open.length - 1]!;
        if (names.has(name)) return name;
        names.add(name);
        nameNext = false;
      }
      i = end;
    } else if (c === 0x7b) { // {
      open.push(new Set());
      nameNext = true;
    } else if (c === 0x5b) { // [
      open.push(null);
    } else if (c === 0x7d || c === 0x5d) { // } ]
      open.pop();
      nameNext = false;
    } else if (c === 0x2c) { // a comma: in an object, a name comes next
      nameNext = open[open.length - 1] !== null;
    }
  }
  return undefined;
}

/** "todo@1": a namespace and a version (core/schema.ts). */
const SCHEMA_ID = /^.+@[1-9][0-9]*$/;

function corrupt(message: string): never {
  throw new CairnError("E_CORRUPT_ENCODING", message);
}

/** `check()`'s value; its CairnError becomes E_CORRUPT_ENCODING at `where`. */
function refusedAs<T>(where: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!isCairnError(err)) throw err;
    return corrupt(`${where}: ${err.message}`);
  }
}

/**
 * A field holding a list must hold strings: a set's wire form, the one list a field value is. A
 * list of lists is how a commit carries text edits, which a repository reading it without the
 * schema takes it for (repo/text_fields.ts): not a value an import may write, the block holding
 * it would be refused whole when read again.
 */
function checkLists(value: FieldRecord, where: string): void {
  for (const [field, entry] of Object.entries(value)) {
    if (!Array.isArray(entry)) continue;
    const i = entry.findIndex((element) => typeof element !== "string");
    if (i !== -1) {
      corrupt(`${where}.${field}[${i}]: a field's list holds strings (a set); text is a string`);
    }
  }
}

/** Strings must be well-formed UTF-16: a lone surrogate cannot be encoded in a block. */
function checkStrings(value: unknown, where: string): void {
  if (typeof value === "string") {
    if (!value.isWellFormed()) corrupt(`${where}: a string with a lone surrogate`);
  } else if (Array.isArray(value)) {
    value.forEach((entry, i) => checkStrings(entry, `${where}[${i}]`));
  } else if (isPlainObject(value)) {
    for (const [name, entry] of Object.entries(value)) {
      checkStrings(name, where);
      checkStrings(entry, `${where}.${name}`);
    }
  }
}
