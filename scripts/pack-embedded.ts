/**
 * The build's plugin that packs the large files the binary embeds (`with { type: "file" }`)
 * with src/index/embedders/packed-file.ts, which unpacks them when their embedder loads. They are
 * most of what the binary adds to the Bun runtime and are read only in hybrid mode, so they
 * travel compressed; the code reading them calls readEmbeddedFile. Packing the same bytes again is
 * skipped: packed files are kept under node_modules/.cache, by the hash of what went in.
 */

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { BunPlugin } from "bun";
import { type Planes, packBytes } from "../src/index/embedders/packed-file.ts";

export interface PackRule {
  /** Matches the embedded file's resolved path. */
  path: RegExp;
  planes: Planes;
  /** zstd's level: 19 where it gains, 9 for the weights, where 19 gains 1% for 50 times the time. */
  level: number;
}

/** What is packed, and how (docs/getting-started.md, Install: what the binary is made of). */
export const PACK_RULES: readonly PackRule[] = [
  // onnxruntime's wasm (the HF ONNX embedder): 14.3 MB, 2.5 MB packed.
  { path: /\/onnxruntime-web\/dist\/ort-wasm-simd-threaded\.wasm$/, planes: 1, level: 19 },
  // The built-in encoder's weights (float32 and int32): 27.9 MB, 23.8 MB packed (25.9 MB without planes).
  { path: /\/@energetic-ai\/model-embeddings-en\/dist\/group1-shard\d+of\d+$/, planes: 4, level: 9 },
  // Its graph and vocabulary: 465 kB, 80 kB packed.
  { path: /\/@energetic-ai\/model-embeddings-en\/dist\/(model|vocab)\.json$/, planes: 1, level: 19 },
  // The tray's native helper (systray2), one for the target's system: 3.5 MB, about 1.5 MB packed.
  { path: /\/systray2\/traybin\/tray_(linux|darwin|windows)_release(\.exe)?$/, planes: 1, level: 19 },
  // tfjs's own two wasm files (720 kB) stay as they are: tfjs reads them itself, by path.
];

/** Part of the cache key: bump it when packBytes changes what it writes. */
const CACHE_VERSION = "1";

export function packEmbeddedPlugin(cacheDir: string, rules: readonly PackRule[] = PACK_RULES) {
  const used = new Set<PackRule>();
  const plugin: BunPlugin = {
    name: "pack-embedded",
    setup(build) {
      const filter = new RegExp(rules.map((rule) => rule.path.source).join("|"));
      build.onLoad({ filter }, (args) => {
        const rule = rules.find((candidate) => candidate.path.test(args.path));
        if (!rule) return undefined;
        used.add(rule);
        return { contents: packedCopy(args.path, rule, cacheDir), loader: "file" };
      });
    },
  };
  return {
    plugin,
    /** Rules that matched no file: a package that renamed its files would otherwise ship them unpacked. */
    unused: () => rules.filter((rule) => !used.has(rule)).map((rule) => rule.path.source),
  };
}

function packedCopy(path: string, rule: PackRule, cacheDir: string): Uint8Array {
  const bytes = readFileSync(path);
  const key = new Bun.CryptoHasher("sha256")
    .update(`${CACHE_VERSION}/${rule.planes}/${rule.level}/`)
    .update(bytes)
    .digest("hex");
  const cached = join(cacheDir, key);
  try {
    return readFileSync(cached);
  } catch {
    const packed = packBytes(bytes, rule.planes, rule.level);
    // Said because it takes seconds, once after `npm ci` or a package upgrade.
    const mb = (n: number) => (n / 1e6).toFixed(1);
    process.stderr.write(`packed ${basename(path)}: ${mb(bytes.length)} MB -> ${mb(packed.length)} MB\n`);
    mkdirSync(cacheDir, { recursive: true });
    // Renamed into place whole: builds running side by side never read half a file.
    const partial = `${cached}.${process.pid}.partial`;
    writeFileSync(partial, packed);
    renameSync(partial, cached);
    return packed;
  }
}
