#!/usr/bin/env bun
import { spawnSync } from "node:child_process";
/**
 * Builds a release: the binary for every platform (cross-compiled with `bun build --compile`;
 * Bun fetches each target's runtime from the npm registry once), packed as each platform
 * expects (a .tar.gz holding `mcpproxy` for Linux and macOS, a bare .exe for Windows), a
 * SHA256SUMS file, the installer, and the Homebrew formula for the tap.
 *
 *   npm run release -- [--out DIR] [--targets linux-x64,darwin-arm64,…] [--base-url URL]
 *
 * --base-url is where the assets will be downloadable (the formula's URLs); by default the
 * project's GitHub release for this version.
 */
import { createHash } from "node:crypto";
import {
  copyFileSync,
  createReadStream,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };
import { buildInfo, compile, ROOT } from "./compile.ts";
import { renderFormula } from "./release/homebrew-formula.ts";

/** Release targets: our name (os-arch[-libc]) → Bun's compile target. */
export const TARGETS = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
  "linux-x64-musl": "bun-linux-x64-musl",
  "linux-arm64-musl": "bun-linux-arm64-musl",
  "darwin-x64": "bun-darwin-x64",
  "darwin-arm64": "bun-darwin-arm64",
  "windows-x64": "bun-windows-x64",
} as const;
export type Target = keyof typeof TARGETS;

const FORMULA_TARGETS = ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64"] as const;
const GITHUB = pkg.homepage;

export function assetName(version: string, target: Target): string {
  return target.startsWith("windows-")
    ? `mcpproxy-${version}-${target}.exe`
    : `mcpproxy-${version}-${target}.tar.gz`;
}

export interface ReleaseResult {
  dir: string;
  version: string;
  assets: { target: Target; file: string; bytes: number; binaryBytes: number; sha256: string }[];
  formula?: string;
}

export async function release(options: {
  out: string;
  targets: Target[];
  baseUrl?: string;
}): Promise<ReleaseResult> {
  const version = pkg.version;
  const dir = resolve(options.out);
  mkdirSync(dir, { recursive: true });
  const info = buildInfo();
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-release-"));
  const assets: ReleaseResult["assets"] = [];
  try {
    for (const target of options.targets) {
      const file = assetName(version, target);
      const isWindows = target.startsWith("windows-");
      const stage = join(work, target);
      mkdirSync(stage);
      const binary = join(stage, isWindows ? "mcpproxy.exe" : "mcpproxy");
      await compile(binary, info, TARGETS[target]);
      const binaryBytes = statSync(binary).size;
      if (isWindows) copyFileSync(binary, join(dir, file));
      else {
        copyFileSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));
        packTarGz(stage, ["mcpproxy", "LICENSE"], join(dir, file));
      }
      rmSync(stage, { recursive: true, force: true });
      assets.push({
        target,
        file,
        bytes: statSync(join(dir, file)).size,
        binaryBytes,
        sha256: await sha256Of(join(dir, file)),
      });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  // sha256sum's own format, so `sha256sum -c SHA256SUMS` checks a download.
  writeFileSync(join(dir, "SHA256SUMS"), assets.map((asset) => `${asset.sha256}  ${asset.file}\n`).join(""));
  copyFileSync(join(ROOT, "install.sh"), join(dir, "install.sh"));
  const result: ReleaseResult = { dir, version, assets };
  const baseUrl = (options.baseUrl ?? `${GITHUB}/releases/download/v${version}`).replace(/\/+$/, "");
  const byTarget = new Map(assets.map((asset) => [asset.target, asset]));
  if (FORMULA_TARGETS.every((target) => byTarget.has(target))) {
    const entry = (target: (typeof FORMULA_TARGETS)[number]) => {
      const asset = byTarget.get(target)!;
      return { url: `${baseUrl}/${asset.file}`, sha256: asset.sha256 };
    };
    mkdirSync(join(dir, "Formula"), { recursive: true });
    result.formula = join(dir, "Formula", "mcpproxy.rb");
    writeFileSync(
      result.formula,
      renderFormula({
        version,
        description: "Gateway that lets AI agents search and call the tools of many MCP servers",
        homepage: GITHUB,
        license: pkg.license,
        assets: {
          "darwin-arm64": entry("darwin-arm64"),
          "darwin-x64": entry("darwin-x64"),
          "linux-arm64": entry("linux-arm64"),
          "linux-x64": entry("linux-x64"),
        },
      }),
    );
  }
  return result;
}

/** A gzipped tar of `files` in `dir`, byte-for-byte the same for the same input (owner, times, order). */
function packTarGz(dir: string, files: string[], out: string): void {
  const epoch = process.env.SOURCE_DATE_EPOCH ?? "0";
  const tar = spawnSync(
    "tar",
    ["--sort=name", `--mtime=@${epoch}`, "--owner=0", "--group=0", "--numeric-owner", "-cf", "-", ...files],
    { cwd: dir, maxBuffer: 1 << 30 },
  );
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr?.toString()}`);
  const gzip = spawnSync("gzip", ["-n"], { input: tar.stdout, maxBuffer: 1 << 30 });
  if (gzip.status !== 0) throw new Error(`gzip failed: ${gzip.stderr?.toString()}`);
  writeFileSync(out, gzip.stdout);
}

function sha256Of(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("end", () => done(hash.digest("hex")))
      .on("error", fail);
  });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { out: { type: "string" }, targets: { type: "string" }, "base-url": { type: "string" } },
  });
  const targets = (values.targets?.split(",") ?? Object.keys(TARGETS)).map((name) => name.trim());
  const unknown = targets.filter((name) => !(name in TARGETS));
  if (unknown.length > 0) {
    process.stderr.write(
      `release: unknown target ${unknown.join(", ")}; known: ${Object.keys(TARGETS).join(", ")}\n`,
    );
    process.exit(2);
  }
  const result = await release({
    out: values.out ?? join(ROOT, "dist", "release"),
    targets: targets as Target[],
    ...(values["base-url"] ? { baseUrl: values["base-url"] } : {}),
  });
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  for (const asset of result.assets) {
    process.stdout.write(`${asset.file}  ${mib(asset.bytes)} (binary ${mib(asset.binaryBytes)})\n`);
  }
  process.stdout.write(
    `SHA256SUMS, install.sh${result.formula ? ", Formula/mcpproxy.rb" : ""} in ${result.dir}\n`,
  );
}
