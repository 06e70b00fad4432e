import { test } from "node:test";
import assert from "node:assert/strict";
import { durationText, TimeLeft, timeLeftText } from "../../bench/lib/time_left.ts";

test("time left: nothing to go by until an earlier run or a finished cell", () => {
  const left = new TimeLeft(["a", "b", "c"]);
  assert.equal(left.estimate(0), undefined);
  assert.equal(timeLeftText(left.estimate(0)), "estimating the time left");
  left.running("a", 0);
  left.finished("a", 999, 2_000);
  assert.equal(left.done, 1);
  assert.equal(left.estimate(2_000), 4_000, "two cells at this run's mean of 2 s");
});

test("time left: an earlier run's cell times, scaled by how this run compares", () => {
  const earlier = new Map([["a", 1_000], ["b", 100_000], ["c", 1_000]]);
  const left = new TimeLeft(["a", "b", "c"], earlier);
  assert.equal(left.estimate(0), 102_000);
  left.running("a", 0);
  left.finished("a", 0, 1_000);
  assert.equal(left.estimate(1_000), 101_000, "as fast as before: the earlier times");
  left.running("b", 1_000);
  assert.equal(left.estimate(41_000), 61_000, "the running cell's elapsed time counts");
});

test("durations read coarser as they grow", () => {
  assert.equal(durationText(44_600), "45 s");
  assert.equal(durationText(261_000), "4 min 20 s");
  assert.equal(durationText(840_000), "14 min");
  assert.equal(durationText(3_900_000), "1 h 5 min");
});
