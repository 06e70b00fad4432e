/**
 * One tab of the leader election (src/tabs/election.ts) on the real Web Locks and BroadcastChannel
 * of the page, for the multi-page check of scripts/lib/browser_tabs_pages.ts that closes the
 * leader's page.
 */
import { openTabChannel } from "../../../src/tabs/broadcast_channel.ts";
import { Election, HEARTBEAT_MS } from "../../../src/tabs/election.ts";
import type { LockManagerLike } from "../../../src/tabs/locks.ts";
import { decodeTabMessage } from "../../../src/tabs/tab_messages.ts";

const out = document.getElementById("out")!;
const directory = new URL(location.href).searchParams.get("dir") ?? "cairn/election";
const tab = crypto.randomUUID();
const events: string[] = [];
/** Heartbeats heard, for the checks to tell a silent leader from a deaf follower. */
let heard = 0;
const channel = openTabChannel(directory);
const election = new Election(directory, {
  locks: navigator.locks as unknown as LockManagerLike,
  now: () => Date.now(),
  visible: () => document.visibilityState === "visible",
}, {
  becameLeader: (term) => events.push(`leader ${term} at ${Date.now()}`),
  lostLead: () => events.push(`lost at ${Date.now()}`),
  sendHeartbeat: (term) => channel.post({ type: "heartbeat", leader: tab, term }),
  sendProbe: () => channel.post({ type: "probe", from: tab }),
});
channel.listen((value) => {
  try {
    const message = decodeTabMessage(value);
    if (message.type === "heartbeat") {
      heard++;
      election.heardHeartbeat(message.term);
    } else if (message.type === "probe") {
      election.heardProbe();
    }
  } catch (err) {
    events.push(`refused: ${err}`);
  }
});
setInterval(() => election.tick(), HEARTBEAT_MS);
election.start();

Object.assign(globalThis, {
  cairnElection: {
    role: () => election.role,
    term: () => election.term,
    heard: () => heard,
    events,
  },
});
out.textContent = `tab ${tab} in the election of ${directory}`;
document.body.dataset.status = "ok";
