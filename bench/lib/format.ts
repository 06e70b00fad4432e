/** Number formatting shared by the console tables, the page and the report. */

/** 100000 → "100k", 1500 → "1.5k". */
export function countLabel(n: number): string {
  if (n >= 1_000_000 && n % 100_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1_000 && n % 100 === 0) return `${n / 1_000}k`;
  return String(n);
}

/** Three significant digits, no exponent. */
export function num(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString("en-US");
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs >= 0.01) return value.toFixed(3);
  return value.toPrecision(2);
}

/** A latency below the clock's step cannot be told from 0: say so. */
export function belowStep(value: number, step: number): string {
  return value < step ? `<${num(step)}` : num(value);
}
