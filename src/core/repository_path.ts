/** Repository paths: `/data/todos` — slash-separated segments of letters, digits, `_`, `-`, `.`. */
import { CairnError } from "../core/errors.ts";

const PATH_PATTERN = /^(\/[A-Za-z0-9_\-][A-Za-z0-9_.\-]*)+$/;

/**
 * A stored repository's files are named after its path without the leading slash, and the
 * longest name is its settings file written atomically: `<path>.settings.json.tmp`, 17
 * characters more than the path. File systems (ext4, APFS, NTFS) and OPFS take names of up to 255
 * bytes, and a path is ASCII, so 238 is the longest path every file of it can be named after.
 * The limit holds in memory too: a path accepted there can be stored later.
 */
export const MAX_PATH_LENGTH = 238;

/** Whether `path` is a repository path (checkRepositoryPath says why not). */
export function isRepositoryPath(path: unknown): path is string {
  return typeof path === "string" && PATH_PATTERN.test(path) && path.length <= MAX_PATH_LENGTH;
}

export function checkRepositoryPath(path: unknown): string {
  if (typeof path !== "string" || !PATH_PATTERN.test(path)) {
    throw new CairnError(
      "E_BAD_PATH",
      `repository path must look like "/data/todos" (segments of letters, digits, _ - .), got ${
        describe(path)
      }`,
    );
  }
  if (path.length > MAX_PATH_LENGTH) {
    throw new CairnError(
      "E_BAD_PATH",
      `repository path is ${path.length} characters long; at most ${MAX_PATH_LENGTH} fit a file name`,
    );
  }
  return path;
}

function describe(path: unknown): string {
  if (typeof path !== "string") return path === null ? "null" : typeof path;
  return JSON.stringify(path.length > 60 ? `${path.slice(0, 60)}…` : path);
}
