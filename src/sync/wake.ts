/**
 * Signals that the network may be back, so a client waiting out its backoff can try at once:
 * the browser's `online` event, and a page becoming visible again (a backgrounded tab's timers
 * are throttled, and its socket is often gone). Runtimes without them give no signal.
 */

interface EventSource {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
}

/** Calls `callback` on each signal; returns the function that stops listening. */
export function onWake(callback: () => void): () => void {
  const global = globalThis as Partial<EventSource>;
  const page = (globalThis as { document?: Partial<EventSource> & { visibilityState?: string } })
    .document;
  const online = () => callback();
  const visible = () => {
    if (page?.visibilityState === "visible") callback();
  };
  const listensOnline = typeof global.addEventListener === "function";
  const listensVisible = typeof page?.addEventListener === "function";
  if (listensOnline) global.addEventListener!("online", online);
  if (listensVisible) page!.addEventListener!("visibilitychange", visible);
  return () => {
    if (listensOnline) global.removeEventListener?.("online", online);
    if (listensVisible) page!.removeEventListener?.("visibilitychange", visible);
  };
}
