/**
 * The search-index snapshot on disk: a JSON header followed by the raw bytes of every Int32Array
 * in it. Orama's `save()` output goes in as is; the BM25 component hands over its postings as
 * Int32Arrays, which come back as views on the file's buffer, with no text encoding and no copy.
 * (A JSON + base64 snapshot of 10k tools took twice as long to load and briefly held three copies
 * of the postings.)
 *
 *   "MCPXSNP2" | u32 header length | header JSON | padding to 4 bytes | blob 0 | blob 1 | … | u32 CRC-32
 *
 * The CRC-32 of everything before it catches a damaged file before a wild posting sends the
 * search somewhere it should not go (a damaged file once took it to "Out of memory").
 */
const MAGIC = "MCPXSNP2";
const CRC_BYTES = 4;

interface Header {
  value: unknown;
  /** Where each blob goes in `value` (a path of keys) and how many Int32 values it holds, in file order. */
  blobs: { path: (string | number)[]; length: number }[];
}

export function encodeSnapshot(value: unknown): Buffer {
  const arrays: Int32Array[] = [];
  const blobs: Header["blobs"] = [];
  const strip = (item: unknown, path: (string | number)[]): unknown => {
    if (item instanceof Int32Array) {
      arrays.push(item);
      blobs.push({ path, length: item.length });
      return null;
    }
    if (Array.isArray(item)) return item.map((child, i) => strip(child, [...path, i]));
    if (item && typeof item === "object" && !ArrayBuffer.isView(item)) {
      return Object.fromEntries(
        Object.entries(item).map(([key, child]) => [key, strip(child, [...path, key])]),
      );
    }
    return item;
  };
  const header: Header = { value: strip(value, []), blobs };
  const headerBytes = Buffer.from(JSON.stringify(header), "utf8");
  const start = align4(MAGIC.length + 4 + headerBytes.length);
  let size = start + CRC_BYTES;
  for (const array of arrays) size += array.byteLength;
  const out = Buffer.alloc(size);
  out.write(MAGIC, 0, "latin1");
  out.writeUInt32LE(headerBytes.length, MAGIC.length);
  headerBytes.copy(out, MAGIC.length + 4);
  let at = start;
  for (const array of arrays) {
    Buffer.from(array.buffer, array.byteOffset, array.byteLength).copy(out, at);
    at += array.byteLength;
  }
  out.writeUInt32LE(Bun.hash.crc32(out.subarray(0, at)), at);
  return out;
}

/** Throws on anything that is not a complete snapshot; the caller then rebuilds from the catalog. */
export function decodeSnapshot(file: Buffer): unknown {
  if (file.length < MAGIC.length + 4 + CRC_BYTES || file.toString("latin1", 0, MAGIC.length) !== MAGIC) {
    throw new Error("not a search-index snapshot");
  }
  const payload = file.length - CRC_BYTES;
  if (Bun.hash.crc32(file.subarray(0, payload)) !== file.readUInt32LE(payload)) {
    throw new Error("the snapshot is damaged (its checksum does not match)");
  }
  const headerLength = file.readUInt32LE(MAGIC.length);
  const headerEnd = MAGIC.length + 4 + headerLength;
  if (headerEnd > payload) throw new Error("truncated snapshot header");
  // An aligned copy only when the file's buffer is not already 4-byte aligned (small files come from a pool).
  const bytes = file.byteOffset % 4 === 0 ? file : Buffer.from(new Uint8Array(file));
  // A plain parse: a reviver would call back for every one of the tens of thousands of terms.
  const header = JSON.parse(bytes.toString("utf8", MAGIC.length + 4, headerEnd)) as Header;
  const root = { value: header.value };
  let at = align4(headerEnd);
  for (const { path, length } of header.blobs) {
    if (at + length * 4 > payload) throw new Error("truncated snapshot data");
    let parent: Record<string | number, unknown> = root;
    let key: string | number = "value";
    for (const step of path) {
      parent = parent[key] as Record<string | number, unknown>;
      key = step;
    }
    parent[key] = new Int32Array(bytes.buffer, bytes.byteOffset + at, length);
    at += length * 4;
  }
  return root.value;
}

const align4 = (n: number) => (n + 3) & ~3;
