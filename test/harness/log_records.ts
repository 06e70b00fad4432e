/** Where the records of a log file lie, for tests that damage one on purpose. */

/** Byte spans [start, end) of a log's records in file order, the header left out. */
export function recordSpans(format: "binary" | "jsonl", bytes: Uint8Array): [number, number][] {
  const spans: [number, number][] = [];
  if (format === "binary") {
    // docs/storage.md: an 8-byte file header, then records of 12 header bytes and a payload.
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 8; at < bytes.length;) {
      const end = at + 12 + view.getUint32(at + 4, true);
      spans.push([at, end]);
      at = end;
    }
  } else {
    // A header line, then one line per record.
    let start = bytes.indexOf(0x0a) + 1;
    while (start < bytes.length) {
      const end = bytes.indexOf(0x0a, start) + 1;
      spans.push([start, end]);
      start = end;
    }
  }
  return spans;
}
