import { test } from "node:test";
import assert from "node:assert/strict";
import {
  HLC_LOGICAL_PER_MILLI,
  hlcToMillis,
  HybridClock,
  READINGS_PER_WALL_READ,
} from "../../src/core/hlc.ts";

const START = 1_790_000_000_000;

/** A wall clock the test moves by hand, counting how often it is read. */
function fakeWall(start = START): { now: () => number; millis: number; reads: number } {
  const wall = {
    millis: start,
    reads: 0,
    now: () => {
      wall.reads++;
      return wall.millis;
    },
  };
  return wall;
}

/** Lets the current tick end: the clock reads the wall again on its next reading. */
const nextTick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

test("hlc: a reading is wall millis times 1024 when the wall clock moves on", async () => {
  const wall = fakeWall();
  const clock = new HybridClock(wall.now);
  assert.equal(clock.now(), START * HLC_LOGICAL_PER_MILLI);
  wall.millis += 5;
  await nextTick();
  assert.equal(clock.now(), (START + 5) * HLC_LOGICAL_PER_MILLI);
  assert.equal(hlcToMillis(clock.now()), START + 5);
});

test("hlc: 100k readings in one millisecond strictly increase and carry into the millis", () => {
  const clock = new HybridClock(fakeWall().now);
  let previous = clock.now();
  for (let i = 1; i < 100_000; i++) {
    const reading = clock.now();
    if (reading !== previous + 1) assert.fail(`reading ${i}: ${reading} after ${previous}`);
    previous = reading;
  }
  assert.ok(Number.isSafeInteger(previous));
  assert.equal(hlcToMillis(previous), START + Math.floor(99_999 / HLC_LOGICAL_PER_MILLI));
});

test("hlc: readings keep increasing when the wall clock goes backwards", async () => {
  const wall = fakeWall();
  const clock = new HybridClock(wall.now);
  const first = clock.now();
  wall.millis -= 60_000;
  await nextTick();
  const second = clock.now();
  assert.equal(second, first + 1);
  wall.millis += 60_001;
  await nextTick();
  assert.equal(clock.now(), (START + 1) * HLC_LOGICAL_PER_MILLI);
});

test("hlc: one tick reads the wall clock once per READINGS_PER_WALL_READ readings", async () => {
  const wall = fakeWall();
  const clock = new HybridClock(wall.now);
  const first = clock.now();
  assert.equal(wall.reads, 1);
  wall.millis += 1; // not seen until the next wall read
  for (let i = 1; i < READINGS_PER_WALL_READ; i++) assert.equal(clock.now(), first + i);
  assert.equal(wall.reads, 1);
  // The next reading of the same tick reads the wall again and follows it.
  assert.equal(clock.now(), (START + 1) * HLC_LOGICAL_PER_MILLI);
  assert.equal(wall.reads, 2);
  // A new tick reads it on its first reading.
  wall.millis += 1;
  await nextTick();
  assert.equal(clock.now(), (START + 2) * HLC_LOGICAL_PER_MILLI);
  assert.equal(wall.reads, 3);
});

test("hlc: a fractional wall clock is floored to whole milliseconds", () => {
  const clock = new HybridClock(() => START + 0.75);
  assert.equal(clock.now(), START * HLC_LOGICAL_PER_MILLI);
});

test("hlc: observing a peer's reading orders the next local reading after it", () => {
  const clock = new HybridClock(fakeWall().now);
  const remote = (START + 1_000) * HLC_LOGICAL_PER_MILLI + 7;
  assert.equal(clock.observe(remote), true);
  assert.equal(clock.now(), remote + 1);
});

test("hlc: an older peer reading is accepted but never moves the clock back", () => {
  const clock = new HybridClock(fakeWall().now);
  const local = clock.now();
  assert.equal(clock.observe(local - 5_000), true);
  assert.equal(clock.now(), local + 1);
});

test("hlc: a reading further ahead than maxAheadMillis is refused and ignored", () => {
  const wall = fakeWall();
  const clock = new HybridClock(wall.now, 1_000);
  const atLimit = (START + 1_000) * HLC_LOGICAL_PER_MILLI + 1023;
  const beyond = (START + 1_001) * HLC_LOGICAL_PER_MILLI;
  assert.equal(clock.observe(beyond), false);
  assert.equal(clock.now(), START * HLC_LOGICAL_PER_MILLI);
  assert.equal(clock.observe(atLimit), true);
  assert.equal(clock.now(), atLimit + 1);
});

test("hlc: the default limit is five minutes ahead", () => {
  const clock = new HybridClock(fakeWall().now);
  assert.equal(clock.observe((START + 5 * 60_000) * HLC_LOGICAL_PER_MILLI), true);
  assert.equal(clock.observe((START + 5 * 60_000 + 1) * HLC_LOGICAL_PER_MILLI), false);
});

test("hlc: readings that are not safe non-negative integers are refused", () => {
  const clock = new HybridClock(fakeWall().now);
  for (const bad of [NaN, Infinity, -1, 1.5, Number.MAX_SAFE_INTEGER + 2]) {
    assert.equal(clock.observe(bad), false, String(bad));
  }
  assert.equal(clock.now(), START * HLC_LOGICAL_PER_MILLI);
});

test("hlc: the default wall clock is Date.now", () => {
  const before = Date.now();
  const millis = hlcToMillis(new HybridClock().now());
  assert.ok(millis >= before && millis <= Date.now(), `${millis} vs ${before}`);
});

test("hlc: admits() applies the same bound as observe(), against the wall clock read now", () => {
  const wall = fakeWall();
  const clock = new HybridClock(wall.now, 1_000);
  const atLimit = (START + 1_000) * HLC_LOGICAL_PER_MILLI + 1023;
  const beyond = (START + 1_001) * HLC_LOGICAL_PER_MILLI;
  assert.equal(clock.admits(atLimit), true);
  assert.equal(clock.admits(beyond), false);
  assert.equal(clock.maxAheadMillis, 1_000);
  // Refused now, admitted once the wall clock has caught up: nothing is remembered.
  wall.millis += 1;
  assert.equal(clock.admits(beyond), true);
});
