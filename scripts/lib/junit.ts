/**
 * Counts a test run from its JUnit XML report (what `deno test --junit-path` and Node's
 * `--test-reporter=junit` write), so the runner reads results instead of scraping the
 * human-readable output. Only the elements that decide the counts are read.
 */

export interface JUnitCounts {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * A <testcase> element: self-closing, or with its children up to </testcase>. Attribute values
 * are matched as quoted strings: Node leaves ">" unescaped inside them.
 */
const TESTCASE = /<testcase\b(?:[^>"]|"[^"]*")*?(?:\/>|>([\s\S]*?)<\/testcase>)/g;

export function countJUnit(xml: string): JUnitCounts {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const [, body = ""] of xml.matchAll(TESTCASE)) {
    if (/<(?:failure|error)\b/.test(body)) counts.failed++;
    else if (/<skipped\b/.test(body)) counts.skipped++;
    else counts.passed++;
  }
  return counts;
}
