/** The test runner's counts come from JUnit reports (scripts/lib/junit.ts): both runners' forms. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { countJUnit } from "../../scripts/lib/junit.ts";

test("a Deno JUnit report: passed, failed (with its message) and skipped test cases", () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="deno test" tests="3" failures="1" errors="0" time="0.005">
    <testsuite name="./a.test.ts" tests="3" disabled="1" errors="0" failures="1">
        <testcase name="ok one" classname="./a.test.ts" time="0.001" line="3" col="1">
        </testcase>
        <testcase name="fails &lt;two&gt;" classname="./a.test.ts" time="0.001" line="4" col="1">
            <failure message="Uncaught AssertionError">AssertionError: 1 !== 2</failure>
        </testcase>
        <testcase name="skipped" classname="./a.test.ts" time="0.000" line="5" col="1">
            <skipped/>
        </testcase>
    </testsuite>
</testsuites>`;
  assert.deepEqual(countJUnit(xml), { passed: 1, failed: 1, skipped: 1 });
});

test("a Node JUnit report: self-closing cases, and a '>' left unescaped in an attribute", () => {
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<testsuites>
	<testcase name="ok one" time="0.0005" classname="test" file="/tmp/a.test.ts"/>
	<testcase name="fails &lt;two>" time="0.0006" classname="test" file="/tmp/a.test.ts" failure="1 !== 2">
		<failure type="testCodeFailure" message="1 !== 2">[Error: 1 !== 2]</failure>
	</testcase>
	<testcase name="a > b" time="0.0001" classname="test" file="/tmp/a.test.ts"/>
	<testcase name="skipped" time="0.00008" classname="test" file="/tmp/a.test.ts">
		<skipped type="skipped" message="true"/>
	</testcase>
	<testcase name="errored" time="0.1" classname="test" file="/tmp/a.test.ts">
		<error message="boom"/>
	</testcase>
	<!-- tests 5 -->
</testsuites>`;
  assert.deepEqual(countJUnit(xml), { passed: 2, failed: 2, skipped: 1 });
});

test("a report without test cases counts nothing", () => {
  assert.deepEqual(countJUnit("<testsuites></testsuites>"), { passed: 0, failed: 0, skipped: 0 });
});
