/** `useSyncStatus`: a sync link's status in a component, rendered again on each new status. */
import { useCallback, useSyncExternalStore } from "react";
import type { SyncLink, SyncStatus } from "cairndb";

/**
 * "connecting", "catching-up", "synced", "offline" or "closed" (docs/sync.md); `undefined` without
 * a link (none made yet, or on a server rendering the page).
 */
export function useSyncStatus(link: SyncLink | undefined): SyncStatus | undefined {
  const subscribe = useCallback(
    (onChange: () => void) => link ? link.on("status", onChange) : () => {},
    [link],
  );
  const status = useCallback(() => link?.status, [link]);
  return useSyncExternalStore(subscribe, status, status);
}
