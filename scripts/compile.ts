/**
 * `bun build --compile` of main.ts into one self-contained binary, with the commit and build date
 * baked in for `mcpproxy --version`. `npm run build` and the release script both go through here,
 * so a binary from either says where it came from.
 */

import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { packEmbeddedPlugin } from "./pack-embedded.ts";

export const ROOT = resolve(import.meta.dir, "..");

export interface BuildInfo {
  commit: string;
  /** UTC, YYYY-MM-DD. */
  date: string;
}

/**
 * The checkout's short commit (with `-dirty` when the tree has changes), or "unknown" outside a
 * git checkout; the date from SOURCE_DATE_EPOCH when set (reproducible builds), else today.
 */
export function buildInfo(): BuildInfo {
  const git = (...args: string[]) => spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });
  const head = git("rev-parse", "--short=12", "HEAD");
  let commit = head.status === 0 ? head.stdout.trim() : "unknown";
  if (head.status === 0 && git("status", "--porcelain", "--untracked-files=no").stdout.trim() !== "") {
    commit += "-dirty";
  }
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  const date = new Date(Number.isFinite(epoch) && epoch > 0 ? epoch * 1000 : Date.now());
  return { commit, date: date.toISOString().slice(0, 10) };
}

/** The system a target runs on, as Node names it ("linux", "darwin", "win32"). */
function targetOs(target: string | undefined): string {
  if (!target) return process.platform;
  return target.includes("darwin") ? "darwin" : target.includes("windows") ? "win32" : "linux";
}

/**
 * The tray helpers of the other systems left out: each is a module of its own (src/tray/helper-*.ts)
 * that helper-binary.ts imports only on its system, and the bundler would embed all three.
 */
function onlyTargetTrayHelper(os: string): BunPlugin {
  const wanted = os === "darwin" ? "darwin" : os === "win32" ? "windows" : "linux";
  return {
    name: "only-target-tray-helper",
    setup(build) {
      build.onLoad({ filter: /\/src\/tray\/helper-(linux|darwin|windows)\.ts$/ }, (args) =>
        args.path.endsWith(`helper-${wanted}.ts`)
          ? undefined
          : { contents: 'export default "";', loader: "ts" },
      );
    },
  };
}

/** Compiles the binary for `target` (a Bun target such as bun-darwin-arm64; this machine when absent). */
export async function compile(
  outfile: string,
  info: BuildInfo,
  target?: Bun.Build.CompileTarget,
): Promise<void> {
  const packing = packEmbeddedPlugin(join(ROOT, "node_modules", ".cache", "mcpproxy-packed"));
  const result = await Bun.build({
    // The built-in encoder's worker is an entry point of its own, which a compiled binary names
    // by its path from the root (use-lite-embedder.ts, workerScript).
    entrypoints: [resolve(ROOT, "main.ts"), resolve(ROOT, "src/index/embedders/use-lite-worker.ts")],
    compile: { outfile, ...(target ? { target } : {}) },
    minify: true,
    // Each command's implementation, and what a command imports only when it needs it, in chunks of
    // their own: a chunk is parsed and run when imported, so `--version` or `search` never parse the
    // serve stack (docs/architecture.md, Speed).
    splitting: true,
    // JavaScriptCore's bytecode built in, so no chunk is parsed at start: after the splitting above,
    // `--version` 15 -> 9 ms, a lexical search 119 -> 90 ms and serve's start 270 -> 200 ms of CPU,
    // for 13.4 MB more binary (6.5 MB more download); docs/benchmarks.md, Start-up. The bytecode is
    // the same on every target (it is not machine code), and a runtime that cannot use it parses the
    // source instead.
    bytecode: true,
    format: "esm",
    define: {
      MCPPROXY_BUILD_COMMIT: JSON.stringify(info.commit),
      MCPPROXY_BUILD_DATE: JSON.stringify(info.date),
      // Which system's tray helper the binary embeds (tray/helper-binary.ts): only the target's.
      MCPPROXY_TARGET_OS: JSON.stringify(targetOs(target)),
    },
    plugins: [packing.plugin, onlyTargetTrayHelper(targetOs(target))],
    throw: false,
  });
  if (!result.success) {
    throw new Error(`bun build --compile failed for ${target ?? "this machine"}:\n${result.logs.join("\n")}`);
  }
  const unused = packing.unused();
  if (unused.length > 0)
    throw new Error(`scripts/pack-embedded.ts: no embedded file matched ${unused.join(", ")}`);
}

if (import.meta.main) await compile(resolve(ROOT, "dist", "mcpproxy"), buildInfo());
