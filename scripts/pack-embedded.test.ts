import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPacked, unpackBytes } from "../src/index/embedders/packed-file.ts";
import { packEmbeddedPlugin } from "./pack-embedded.ts";

setDefaultTimeout(60_000);
const work = mkdtempSync(join(tmpdir(), "mcpproxy-pack-embedded-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A bundle (not a binary) of an entry that embeds `weights.bin` and `notes.txt` with `type: "file"`. */
async function bundle(name: string, rules: Parameters<typeof packEmbeddedPlugin>[1], cacheDir: string) {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "weights.bin"),
    new Uint8Array(Float32Array.from({ length: 5000 }, Math.sin).buffer),
  );
  writeFileSync(join(dir, "notes.txt"), "kept as it is\n");
  writeFileSync(
    join(dir, "entry.ts"),
    'import w from "./weights.bin" with { type: "file" };\nimport n from "./notes.txt" with { type: "file" };\nconsole.log(w, n);\n',
  );
  const packing = packEmbeddedPlugin(cacheDir, rules);
  const result = await Bun.build({
    entrypoints: [join(dir, "entry.ts")],
    outdir: join(dir, "out"),
    target: "bun",
    plugins: [packing.plugin],
    throw: false,
  });
  expect(result.logs).toEqual([]);
  const asset = (prefix: string) => {
    const file = readdirSync(join(dir, "out")).find((entry) => entry.startsWith(prefix));
    return readFileSync(join(dir, "out", file!));
  };
  return { dir, unused: packing.unused(), weights: asset("weights-"), notes: asset("notes-") };
}

describe("the build's packing of embedded files", () => {
  test("a matched file is embedded packed and unpacks to the original; others are left alone; the cache is reused", async () => {
    const cacheDir = join(work, "cache");
    const rules = [{ path: /\/weights\.bin$/, planes: 4 as const, level: 3 }];
    const first = await bundle("first", rules, cacheDir);
    expect(first.unused).toEqual([]);
    expect(isPacked(first.weights)).toBe(true);
    expect(Buffer.from(unpackBytes(first.weights)).equals(readFileSync(join(first.dir, "weights.bin")))).toBe(
      true,
    );
    expect(first.notes.toString()).toBe("kept as it is\n");
    expect(readdirSync(cacheDir)).toHaveLength(1);

    const second = await bundle("second", rules, cacheDir);
    expect(second.weights.equals(first.weights)).toBe(true);
    expect(readdirSync(cacheDir)).toHaveLength(1);
  });

  test("a rule that matches no file is reported, so a renamed file cannot ship unpacked unnoticed", async () => {
    const rules = [
      { path: /\/weights\.bin$/, planes: 1 as const, level: 3 },
      { path: /\/renamed-weights\.bin$/, planes: 1 as const, level: 3 },
    ];
    const built = await bundle("unused", rules, join(work, "cache-unused"));
    expect(built.unused).toEqual(["\\/renamed-weights\\.bin$"]);
  });
});
