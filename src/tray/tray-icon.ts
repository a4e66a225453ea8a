import { deflateSync } from "node:zlib";

/**
 * The tray's icon as a PNG, drawn here: a filled circle in the state's colour with a light ring, on
 * a transparent square (no image files to ship, any colour at any size).
 */
export function circleIcon(rgb: readonly [number, number, number], size = 32): Uint8Array {
  const [r, g, b] = rgb;
  const centre = (size - 1) / 2;
  const radius = size / 2 - 1;
  const rows: Buffer[] = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4); // filter byte 0, then RGBA
    for (let x = 0; x < size; x++) {
      const distance = Math.hypot(x - centre, y - centre);
      // Anti-aliased edge: one pixel of fade; a paler ring just inside it.
      const alpha = Math.max(0, Math.min(1, radius + 0.5 - distance));
      const isRing = distance > radius - 2.5;
      const at = 1 + x * 4;
      row[at] = isRing ? Math.round(r + (255 - r) * 0.35) : r;
      row[at + 1] = isRing ? Math.round(g + (255 - g) * 0.35) : g;
      row[at + 2] = isRing ? Math.round(b + (255 - b) * 0.35) : b;
      row[at + 3] = Math.round(alpha * 255);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(Buffer.concat(rows))),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** One PNG chunk: length, type, data, CRC-32 of type and data. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(Bun.hash.crc32(body), 0);
  return Buffer.concat([length, body, crc]);
}
