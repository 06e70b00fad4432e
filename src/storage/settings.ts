/**
 * Settings files, read as hostile input and written atomically (a crash leaves the old file or
 * the new one, never a mix):
 * - the database directory's `cairn.json`: the log format and the session's secret key, so a
 *   reopened database is the same session;
 * - a repository's `<repo>.settings.json`: the fields given to `createIndex`, so their indexes
 *   are rebuilt when the repository is opened again.
 */
import { fromBase64Url, toBase64Url } from "../core/bytes.ts";
import { CairnError } from "../core/errors.ts";
import { SECRET_KEY_BYTES } from "../core/signing.ts";
import { isPlainObject } from "../core/wire_validation.ts";
import { isRepositoryPath } from "../core/repository_path.ts";
import type { StorageBackend } from "./backend.ts";

export const SETTINGS_FILE = "cairn.json";
const SETTINGS_VERSION = 1;
const REPOSITORY_SETTINGS_VERSION = 1;

import type { LogFormat } from "./log_format.ts";

export type LogFormatName = LogFormat["name"];

export interface DatabaseSettings {
  readonly format: LogFormatName;
  readonly secretKey: Uint8Array;
}

export async function readSettings(backend: StorageBackend): Promise<DatabaseSettings | undefined> {
  const json = await readSettingsFile(backend, SETTINGS_FILE, "database", SETTINGS_VERSION);
  if (json === undefined) return undefined;
  const secretKey = typeof json.secretKey === "string" ? fromBase64Url(json.secretKey) : undefined;
  if (
    (json.format !== "binary" && json.format !== "jsonl") || secretKey?.length !== SECRET_KEY_BYTES
  ) {
    throw new CairnError("E_CORRUPT_ENCODING", `${SETTINGS_FILE} is damaged (format or key)`);
  }
  return { format: json.format, secretKey };
}

export async function writeSettings(
  backend: StorageBackend,
  settings: DatabaseSettings,
): Promise<void> {
  const json = {
    cairn: "database",
    version: SETTINGS_VERSION,
    format: settings.format,
    secretKey: toBase64Url(settings.secretKey),
  };
  await writeSettingsFile(backend, SETTINGS_FILE, json);
}

export interface RepositorySettings {
  /** Fields given to `createIndex`, in the order they were first given. */
  readonly indexes: readonly string[];
}

/** The repository's settings, or undefined when it has none stored yet. */
export async function readRepositorySettings(
  backend: StorageBackend,
  repositoryPath: string,
): Promise<RepositorySettings | undefined> {
  const name = repositorySettingsFile(repositoryPath);
  const json = await readSettingsFile(backend, name, "repository", REPOSITORY_SETTINGS_VERSION);
  if (json === undefined) return undefined;
  const { indexes } = json;
  if (
    !Array.isArray(indexes) ||
    !indexes.every((field) => typeof field === "string" && field.length > 0)
  ) {
    throw new CairnError("E_CORRUPT_ENCODING", `${name} is damaged (indexes)`);
  }
  return { indexes: [...new Set(indexes as string[])] };
}

export async function writeRepositorySettings(
  backend: StorageBackend,
  repositoryPath: string,
  settings: RepositorySettings,
): Promise<void> {
  await writeSettingsFile(backend, repositorySettingsFile(repositoryPath), {
    cairn: "repository",
    version: REPOSITORY_SETTINGS_VERSION,
    indexes: settings.indexes,
  });
}

/** The settings file of a repository: "/data/notes" → "data~notes.settings.json". */
export function repositorySettingsFile(repositoryPath: string): string {
  return logFileName(repositoryPath, ".settings.json");
}

/**
 * The JSON object of a settings file of `kind` ("cairn": kind) in `version`, or undefined when
 * the file does not exist. E_UNSUPPORTED_VERSION for a newer one (a whole number above
 * `version`); E_NOT_A_LOG for anything else, a missing or malformed version too (damage).
 */
async function readSettingsFile(
  backend: StorageBackend,
  name: string,
  kind: string,
  version: number,
): Promise<Record<string, unknown> | undefined> {
  const bytes = await backend.readFile(name);
  if (bytes === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new CairnError("E_NOT_A_LOG", `${name} is not a Cairn settings file (not JSON)`);
  }
  if (!isPlainObject(json) || json.cairn !== kind) {
    throw new CairnError("E_NOT_A_LOG", `${name} is not a Cairn ${kind} settings file`);
  }
  if (json.version !== version) {
    const newer = Number.isSafeInteger(json.version) && (json.version as number) > version;
    throw new CairnError(
      newer ? "E_UNSUPPORTED_VERSION" : "E_NOT_A_LOG",
      `${name} has version ${String(json.version)}; this Cairn reads version ${version}`,
    );
  }
  return json;
}

async function writeSettingsFile(
  backend: StorageBackend,
  name: string,
  json: Record<string, unknown>,
): Promise<void> {
  await backend.writeFileAtomic(
    name,
    new TextEncoder().encode(JSON.stringify(json, null, 2) + "\n"),
  );
}

/** The log file of a repository: "/data/todos" → "data~todos.log" (paths cannot contain "~"). */
export function logFileName(repositoryPath: string, extension: string): string {
  return `${repositoryPath.slice(1).replaceAll("/", "~")}${extension}`;
}

/**
 * The repository whose log file `name` (of `format`) would be, or undefined for a name that no
 * repository's log has ("a b.log", ".log"): logFileName backwards.
 */
export function repositoryOfLogFile(name: string, format: LogFormat): string | undefined {
  if (!name.endsWith(format.fileExtension)) return undefined;
  const path = `/${name.slice(0, -format.fileExtension.length).replaceAll("~", "/")}`;
  return isRepositoryPath(path) ? path : undefined;
}
