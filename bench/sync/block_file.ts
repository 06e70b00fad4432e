/**
 * The file S03 imports blocks from: `exportBlocks` frames one after another, each after its
 * length (4 bytes, big-endian). Pure encoding; the host writes and reads the file.
 */

export function encodeBlockFile(frames: readonly Uint8Array[]): Uint8Array {
  const total = frames.reduce((sum, f) => sum + 4 + f.byteLength, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const frame of frames) {
    view.setUint32(at, frame.byteLength);
    out.set(frame, at + 4);
    at += 4 + frame.byteLength;
  }
  return out;
}

export function decodeBlockFile(bytes: Uint8Array): Uint8Array[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    if (at + 4 > bytes.byteLength) throw new Error("block file: a length is cut short");
    const length = view.getUint32(at);
    if (at + 4 + length > bytes.byteLength) throw new Error("block file: a frame is cut short");
    frames.push(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return frames;
}
