/**
 * How Cairn names a database directory in the origin private file system: its parts joined by
 * single slashes ("cairn/mydb"), whatever slashes a caller put around them. The storage and the
 * tabs' locks and channel are named by it, so that "cairn/mydb" and "/cairn/mydb/" are one
 * database with one election (docs/browser.md).
 */
import { CairnError } from "../../core/errors.ts";

/** The normalized directory of `directory`; E_BAD_ARGUMENT for one that names none. */
export function opfsDirectory(directory: string): string {
  const parts = typeof directory === "string" ? directory.split("/").filter((p) => p !== "") : [];
  if (parts.length === 0 || parts.some((p) => p === "." || p === ".." || p.includes("\\"))) {
    throw new CairnError(
      "E_BAD_ARGUMENT",
      `not an OPFS directory path: ${JSON.stringify(directory)} (expected e.g. "cairn/mydb")`,
    );
  }
  return parts.join("/");
}
