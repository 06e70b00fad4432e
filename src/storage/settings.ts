/**
 * A database directory's settings file, `cairn.json`: the log format and the session's secret
 * key, so a reopened database is the same session. Read as hostile input; written atomically.
 */
import { fromBase64Url, toBase64Url } from "../core/bytes.ts";
import { CairnError } from "../core/errors.ts";
import { SECRET_KEY_BYTES } from "../core/signing.ts";
import { isPlainObject } from "../core/wire_validation.ts";
import type { StorageBackend } from "./backend.ts";

export const SETTINGS_FILE = "cairn.json";
const SETTINGS_VERSION = 1;

import type { LogFormat } from "./log_format.ts";

export type LogFormatName = LogFormat["name"];

export interface DatabaseSettings {
  readonly format: LogFormatName;
  readonly secretKey: Uint8Array;
}

export async function readSettings(backend: StorageBackend): Promise<DatabaseSettings | undefined> {
  const bytes = await backend.readFile(SETTINGS_FILE);
  if (bytes === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new CairnError("E_NOT_A_LOG", `${SETTINGS_FILE} is not a Cairn settings file (not JSON)`);
  }
  if (!isPlainObject(json) || json.cairn !== "database") {
    throw new CairnError("E_NOT_A_LOG", `${SETTINGS_FILE} is not a Cairn settings file`);
  }
  if (json.version !== SETTINGS_VERSION) {
    throw new CairnError(
      "E_UNSUPPORTED_VERSION",
      `${SETTINGS_FILE} has version ${
        String(json.version)
      }; this Cairn reads version ${SETTINGS_VERSION}`,
    );
  }
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
  await backend.writeFileAtomic(
    SETTINGS_FILE,
    new TextEncoder().encode(JSON.stringify(json, null, 2) + "\n"),
  );
}

/** The log file of a repository: "/data/todos" → "data~todos.log" (paths cannot contain "~"). */
export function logFileName(repositoryPath: string, extension: string): string {
  return `${repositoryPath.slice(1).replaceAll("/", "~")}${extension}`;
}
