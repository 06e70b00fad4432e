/** Following a text through change events, as an editor binding does. */
import type { ItemChange } from "cairndb";

/** `text` with `change`'s text changes applied in order: of `field` only, when given. */
export function replayTextChanges(text: string, change: ItemChange, field?: string): string {
  for (const { field: changed, changes } of change.text ?? []) {
    if (field !== undefined && changed !== field) continue;
    for (const { index, deleted, inserted } of changes) {
      text = text.slice(0, index) + inserted + text.slice(index + deleted);
    }
  }
  return text;
}
