/**
 * The tabs' channel over a real BroadcastChannel, one per database directory. Values arrive as
 * structured clones from any script of the origin; the links decode them strictly.
 */
import type { TabChannel } from "./repository_link.ts";
import { encodeTabMessage } from "./tab_messages.ts";

export function tabChannelName(directory: string): string {
  return `cairn:tabs:${directory}`;
}

/** Opens the channel of the database at `directory`; `close()` ends it. */
export function openTabChannel(directory: string): TabChannel & { close(): void } {
  const channel = new BroadcastChannel(tabChannelName(directory));
  return {
    post: (message) => channel.postMessage(encodeTabMessage(message)),
    listen: (listener) => {
      const onMessage = (event: MessageEvent) => listener(event.data);
      channel.addEventListener("message", onMessage);
      return () => channel.removeEventListener("message", onMessage);
    },
    close: () => channel.close(),
  };
}
