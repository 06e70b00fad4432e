/** Repository paths: `/data/todos` — slash-separated segments of letters, digits, `_`, `-`, `.`. */
import { CairnError } from "../core/errors.ts";

const PATH_PATTERN = /^(\/[A-Za-z0-9_\-][A-Za-z0-9_.\-]*)+$/;
const MAX_PATH_LENGTH = 256;

export function checkRepositoryPath(path: unknown): string {
  if (typeof path !== "string" || path.length > MAX_PATH_LENGTH || !PATH_PATTERN.test(path)) {
    throw new CairnError(
      "E_BAD_PATH",
      `repository path must look like "/data/todos" (segments of letters, digits, _ - .), got ${
        JSON.stringify(path)
      }`,
    );
  }
  return path;
}
