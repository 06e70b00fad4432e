/**
 * The tab message codec: every message type round-trips, with its version; hostile values —
 * wrong types, missing and extra fields, unknown types, bad ids and paths, oversize blocks,
 * random values — are refused with E_PROTOCOL or E_TOO_LARGE and nothing else, and messages of
 * another version with E_UNSUPPORTED_VERSION (their leaders' heartbeats still read as such). Seeded: CAIRN_TABS_SEED=S
 * replays the random part (the seed is printed on failure).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import {
  decodeTabMessage,
  encodeTabMessage,
  foreignLeader,
  MAX_TAB_BLOCKS,
  MAX_TERM,
  TAB_PROTOCOL,
  type TabMessage,
} from "../../src/tabs/tab_messages.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";

const SEED = envInteger("CAIRN_TABS_SEED") ?? 18_2026;
const FRAME = new Uint8Array([1, 2, 3]);

const SAMPLES: TabMessage[] = [
  { type: "heartbeat", leader: "tab_A-1", term: 3 },
  { type: "probe", from: "tab_B-2" },
  { type: "serving", leader: "tab_A-1", term: 4 },
  { type: "join", from: "tabB", id: 1 },
  { type: "welcome", from: "tabA", to: "tabB", id: 1, secret: new Uint8Array(32).fill(7) },
  { type: "load", from: "tabB", repo: "/data/todos", id: 0 },
  {
    type: "loaded",
    from: "tabA",
    to: "tabB",
    repo: "/data/todos",
    id: 0,
    frames: [FRAME, FRAME],
    last: false,
  },
  { type: "loaded", from: "tabA", to: "tabB", repo: "/x", id: 9, frames: [], last: true },
  { type: "push", from: "tabC", repo: "/data/todos", id: 7, frames: [FRAME] },
  { type: "persisted", from: "tabA", to: "tabC", repo: "/data/todos", id: 7, error: null },
  { type: "persisted", from: "tabA", to: "tabC", repo: "/x", id: 8, error: "E_IO: disk full" },
  { type: "flush", from: "tabB", id: 2 },
  { type: "flushed", from: "tabA", to: "tabB", id: 2, error: null },
  { type: "flushed", from: "tabA", to: "tabB", id: 3, error: "E_IO: disk full" },
  { type: "blocks", from: "tabC", repo: "/data/todos", frames: [FRAME] },
  { type: "sync-ask", from: "tabB", url: "ws://127.0.0.1:8787" },
  {
    type: "sync-status",
    leader: "tabA",
    url: "wss://sync.example.com/cairn",
    status: "catching-up",
    unacknowledged: 12,
    error: null,
  },
  {
    type: "sync-status",
    leader: "tabA",
    url: "ws://127.0.0.1:8787",
    status: "offline",
    unacknowledged: 0,
    error: "E_IO: the connection dropped",
  },
  { type: "sync-absent", to: "tabB", url: "ws://127.0.0.1:8787" },
  { type: "sync-wait", from: "tabB", url: "ws://127.0.0.1:8787", id: 3 },
  { type: "sync-done", to: "tabB", url: "ws://127.0.0.1:8787", id: 3, error: null },
  {
    type: "sync-done",
    to: "tabB",
    url: "ws://127.0.0.1:8787",
    id: 4,
    error: "E_FORBIDDEN: may not write /notes",
  },
  {
    type: "unserved",
    from: "tabA",
    to: "tabB",
    repo: "/notes",
    id: 9,
    error: "E_IO: settings unreadable",
  },
];

/** `fields` as another tab of this version posts them. */
function posted(fields: Record<string, unknown>): Record<string, unknown> {
  return { protocol: TAB_PROTOCOL, ...fields };
}

/** A message of this version with these fields is refused. */
function refusedMessage(fields: Record<string, unknown>, code = "E_PROTOCOL"): void {
  refused(posted(fields), code);
}

function refused(value: unknown, code = "E_PROTOCOL"): void {
  assert.throws(
    () => decodeTabMessage(value),
    (err) => isCairnError(err) && err.code === code,
    `refused with ${code}: ${describe(value)}`,
  );
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}

test("every tab message round-trips through encode and decode", () => {
  for (const message of SAMPLES) {
    const sent = encodeTabMessage(message);
    assert.equal(sent.protocol, TAB_PROTOCOL);
    assert.deepEqual(decodeTabMessage(structuredClone(sent)), message);
  }
});

test("encodeTabMessage copies only the message's own fields, and the version", () => {
  const extra = { ...SAMPLES[0], secret: "not for the channel" } as unknown as TabMessage;
  assert.deepEqual(encodeTabMessage(extra), posted(SAMPLES[0]));
});

test("a message of another version is refused with E_UNSUPPORTED_VERSION; its leader is told apart", () => {
  for (const message of SAMPLES) {
    refused({ ...message }, "E_UNSUPPORTED_VERSION"); // before versions
    refused({ ...message, protocol: TAB_PROTOCOL + 1 }, "E_UNSUPPORTED_VERSION");
    refused({ ...message, protocol: String(TAB_PROTOCOL) }, "E_UNSUPPORTED_VERSION");
  }
  const heartbeat = { type: "heartbeat", leader: "old-tab", term: 7 };
  assert.deepEqual(foreignLeader(heartbeat), { protocol: 0, term: 7 });
  assert.deepEqual(foreignLeader({ ...heartbeat, protocol: 1 }), { protocol: 1, term: 7 });
  assert.deepEqual(foreignLeader({ ...heartbeat, protocol: TAB_PROTOCOL + 1, extra: [] }), {
    protocol: TAB_PROTOCOL + 1,
    term: 7,
  });
  assert.deepEqual(foreignLeader({ ...heartbeat, type: "serving", protocol: TAB_PROTOCOL + 2 }), {
    protocol: TAB_PROTOCOL + 2,
    term: 7,
  });
  // Not a leader of another version: this version's, another message, or malformed.
  for (
    const value of [
      encodeTabMessage(SAMPLES[0]),
      { type: "join", from: "old-tab", id: 1 },
      { ...heartbeat, protocol: -1 },
      { ...heartbeat, protocol: 1.5 },
      { ...heartbeat, term: MAX_TERM + 1 },
      { ...heartbeat, leader: "not a tab id" },
      null,
      [heartbeat],
    ]
  ) assert.equal(foreignLeader(value), undefined, describe(value));
});

test("values that are not messages are refused with E_PROTOCOL", () => {
  for (const value of [null, undefined, 1, "heartbeat", [], [SAMPLES[0]], new Uint8Array(4)]) {
    refused(value);
  }
  refused(Object.assign(Object.create({ polluted: true }), posted(SAMPLES[0])));
  refusedMessage({ type: "nope", leader: "a", term: 1 });
  refusedMessage({ type: "__proto__" });
  refusedMessage({ type: "toString" });
  refusedMessage({ type: 5 });
});

test("every field of every message is checked: missing, extra and wrong-typed fields", () => {
  const wrong: unknown[] = [null, -1, 1.5, "", "a b", {}, [], [new Uint8Array(0)], true, 2 ** 60];
  for (const message of SAMPLES) {
    const fields = Object.keys(message).filter((name) => name !== "type");
    for (const name of fields) {
      const missing: Record<string, unknown> = { ...message };
      delete missing[name];
      refusedMessage(missing);
      for (const value of wrong) {
        // null and any short string are valid errors
        if (name === "error" && (value === null || typeof value === "string")) continue;
        if (name === "frames" && Array.isArray(value) && value.length === 0) continue; // valid
        if (name === "last" && typeof value === "boolean") continue; // valid
        refusedMessage({ ...message, [name]: value });
      }
    }
    refusedMessage({ ...message, extra: 1 });
  }
});

test("tab ids, terms, repository paths and block counts are bounded", () => {
  refusedMessage({ type: "heartbeat", leader: "x".repeat(65), term: 1 });
  // A term a new leader could not count on from (election.ts): a forged one.
  assert.equal(
    decodeTabMessage(posted({ type: "serving", leader: "t", term: MAX_TERM })).type,
    "serving",
  );
  refusedMessage({ type: "heartbeat", leader: "t", term: MAX_TERM + 1 });
  refusedMessage({ type: "serving", leader: "t", term: Number.MAX_SAFE_INTEGER });
  refusedMessage({ type: "blocks", from: "t", repo: "no-slash", frames: [FRAME] });
  refusedMessage({ type: "blocks", from: "t", repo: "/a/../b", frames: [FRAME] });
  refusedMessage({
    type: "blocks",
    from: "t",
    repo: "/a",
    frames: new Array(MAX_TAB_BLOCKS + 1).fill(FRAME),
  });
  refusedMessage({ type: "blocks", from: "t", repo: "/a", frames: [new Uint16Array(2)] });
  refusedMessage({
    type: "persisted",
    from: "tabA",
    to: "t",
    repo: "/x",
    id: 1,
    error: "e".repeat(4097),
  });
  refusedMessage({ type: "unserved", from: "tabA", to: "t", repo: "/x", id: 1, error: null });
  refusedMessage({ type: "welcome", from: "tabA", to: "t", id: 1, secret: new Uint8Array(31) });
  refusedMessage({
    type: "welcome",
    from: "tabA",
    to: "t",
    id: 1,
    secret: Array.from(new Uint8Array(32)),
  });
  refusedMessage({ type: "sync-ask", from: "t", url: "http://127.0.0.1:8787" });
  refusedMessage({ type: "sync-ask", from: "t", url: `ws://${"a".repeat(2048)}` });
  refusedMessage({
    type: "sync-status",
    leader: "t",
    url: "ws://a",
    status: "closed",
    unacknowledged: 0,
    error: null,
  });
});

/** A random structured-clone value, biased towards near-messages. */
function randomValue(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * (depth > 2 ? 7 : 10));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return Math.floor(random() * 2 ** 40) * (random() < 0.5 ? -1 : 1) / (random() < 0.3 ? 3 : 1);
    case 2:
      return ["heartbeat", "push", "blocks", "/data/x", "tab", ""][Math.floor(random() * 6)];
    case 3:
      return new Uint8Array(Math.floor(random() * 4));
    case 4:
      return random() < 0.5;
    case 5:
      return undefined;
    case 6:
      return BigInt(Math.floor(random() * 1000));
    case 7:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
    default: {
      const sample = SAMPLES[Math.floor(random() * SAMPLES.length)];
      const base: Record<string, unknown> = structuredClone(encodeTabMessage(sample));
      const names = Object.keys(base);
      const name = names[Math.floor(random() * names.length)];
      base[name] = randomValue(random, depth + 1);
      return base;
    }
  }
}

test("random values decode to a valid message or fail with a CairnError, never otherwise", () => {
  const random = seededRandom(SEED);
  for (let round = 0; round < 5_000; round++) {
    const value = randomValue(random);
    try {
      const message = decodeTabMessage(value);
      // Whatever is accepted re-encodes to itself: it is exactly a message.
      assert.deepEqual(encodeTabMessage(message), value, `seed ${SEED} round ${round}`);
    } catch (err) {
      const codes = ["E_PROTOCOL", "E_TOO_LARGE", "E_UNSUPPORTED_VERSION"];
      assert.ok(
        isCairnError(err) && codes.includes(err.code),
        `seed ${SEED} round ${round}: ${describe(value)} threw ${err}`,
      );
    }
  }
});
