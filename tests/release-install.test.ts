import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { FIXTURE, ROOT, runProcess } from "./helpers.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * The release and the installer, as a user meets them: `npm run release` cross-compiles the five
 * platforms, and install.sh (run by dash and by bash) installs from that release directory served
 * over HTTP on 127.0.0.1, checking the checksum. The Homebrew formula is checked with `ruby -c`
 * where Debian's ruby package is installed (CI installs it).
 */
const VERSION = pkg.version;
const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"];
const HERE = process.arch === "arm64" ? "linux-arm64" : "linux-x64";
const work = mkdtempSync(join(tmpdir(), "mcpproxy-release-test-"));
const releaseDir = join(work, "release");
const tamperedDir = join(work, "tampered");
let server: ReturnType<typeof Bun.serve> | undefined;
let base = "";

beforeAll(() => {
  const built = Bun.spawnSync(
    [
      process.execPath,
      join(ROOT, "scripts", "release.ts"),
      "--out",
      releaseDir,
      "--targets",
      TARGETS.join(","),
    ],
    { cwd: ROOT, env: { ...process.env, SOURCE_DATE_EPOCH: "1700000000" }, stdout: "pipe", stderr: "pipe" },
  );
  if (built.exitCode !== 0) throw new Error(`release failed: ${built.stderr.toString()}`);
  // The same release with one byte of this platform's asset changed, SHA256SUMS untouched.
  cpSync(releaseDir, tamperedDir, { recursive: true });
  const asset = join(tamperedDir, `mcpproxy-${VERSION}-${HERE}.tar.gz`);
  const bytes = readFileSync(asset);
  bytes[bytes.length >> 1]! ^= 0xff;
  writeFileSync(asset, bytes);
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = decodeURIComponent(new URL(request.url).pathname);
      const [, dir, ...rest] = path.split("/");
      const root = dir === "good" ? releaseDir : dir === "tampered" ? tamperedDir : undefined;
      const file = root && rest.length > 0 && !rest.includes("..") ? join(root, ...rest) : undefined;
      return file && existsSync(file)
        ? new Response(Bun.file(file))
        : new Response("not found", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
}, 240_000);

afterAll(() => {
  server?.stop(true);
  rmSync(work, { recursive: true, force: true });
});

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function sums(dir: string): Map<string, string> {
  return new Map(
    readFileSync(join(dir, "SHA256SUMS"), "utf8")
      .trim()
      .split("\n")
      .map((line) => {
        const [hash, file] = line.split("  ");
        return [file!, hash!] as const;
      }),
  );
}

/** install.sh run by `shell` in a fresh HOME with only the system PATH. */
async function install(shell: string, args: string[], env: Record<string, string> = {}) {
  // Not spawnSync: the release is served from this process, whose event loop must keep running.
  const home = mkdtempSync(join(work, "home-"));
  const result = await runProcess([shell, join(releaseDir, "install.sh"), ...args], {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    ...env,
  });
  return { ...result, home };
}
describe("npm run release", () => {
  test("builds every platform's asset, named mcpproxy-VERSION-OS-ARCH, with matching SHA256SUMS", () => {
    const listed = sums(releaseDir);
    expect([...listed.keys()].sort()).toEqual(
      TARGETS.map((t) =>
        t.startsWith("windows") ? `mcpproxy-${VERSION}-${t}.exe` : `mcpproxy-${VERSION}-${t}.tar.gz`,
      ).sort(),
    );
    for (const [file, hash] of listed) expect(sha256(join(releaseDir, file))).toBe(hash);
    expect(readFileSync(join(releaseDir, "install.sh"), "utf8")).toBe(
      readFileSync(join(ROOT, "install.sh"), "utf8"),
    );
    // The installer's default download place is the project's own (package.json's homepage).
    expect(readFileSync(join(ROOT, "install.sh"), "utf8")).toContain(`REPO_URL="${pkg.homepage}"`);
  });

  test("this platform's binary runs and says its version, commit and build date", () => {
    const out = join(work, "unpacked");
    mkdirSync(out);
    const tar = Bun.spawnSync([
      "tar",
      "-xzf",
      join(releaseDir, `mcpproxy-${VERSION}-${HERE}.tar.gz`),
      "-C",
      out,
    ]);
    expect(tar.exitCode).toBe(0);
    const version = Bun.spawnSync([join(out, "mcpproxy"), "--version"], { stdout: "pipe" });
    expect(version.stdout.toString()).toMatch(
      new RegExp(
        `^mcpproxy ${VERSION.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}(-dirty)?, built 2023-11-14\\)\\n$`,
      ),
    );
  });

  test("the Homebrew formula has one URL and sha256 per macOS and Linux architecture, matching the release", () => {
    const formula = readFileSync(join(releaseDir, "Formula", "mcpproxy.rb"), "utf8");
    const entries = [...formula.matchAll(/url "([^"]+)"\s+sha256 "([0-9a-f]{64})"/g)].map((m) => ({
      url: m[1]!,
      hash: m[2]!,
    }));
    expect(entries).toHaveLength(4);
    const listed = sums(releaseDir);
    for (const { url, hash } of entries) {
      expect(url).toStartWith(`${pkg.homepage}/releases/download/v${VERSION}/`);
      const file = url.split("/").pop()!;
      expect(listed.get(file)).toBe(hash);
    }
    for (const want of ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64"]) {
      expect(entries.some(({ url }) => url.endsWith(`-${want}.tar.gz`))).toBe(true);
    }
    expect(formula).toMatch(/on_macos do\s+on_arm do[\s\S]*darwin-arm64[\s\S]*on_intel do[\s\S]*darwin-x64/);
    expect(formula).toMatch(/on_linux do\s+on_arm do[\s\S]*linux-arm64[\s\S]*on_intel do[\s\S]*linux-x64/);
    expect(formula).toContain('bin.install "mcpproxy"');
    expect(formula).toContain('shell_output("#{bin}/mcpproxy --version")');
  });

  const ruby = Bun.which("ruby");
  if (!ruby)
    process.stderr.write(
      "skipping the formula's `ruby -c` check: ruby is not installed (Debian: apt-get install ruby)\n",
    );
  test.skipIf(!ruby)("the Homebrew formula is valid Ruby (ruby -c)", () => {
    const check = Bun.spawnSync([ruby!, "-c", join(releaseDir, "Formula", "mcpproxy.rb")], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(check.stderr.toString()).toBe("");
    expect(check.stdout.toString()).toContain("Syntax OK");
  });
});

describe("install.sh", () => {
  for (const shell of ["dash", "bash"]) {
    test(`${shell}: installs this platform's binary into ~/.local/bin, creating it, and says what to do next`, async () => {
      const run = await install(shell, [], { MCPPROXY_INSTALL_BASE_URL: `${base}/good` });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const target = join(run.home, ".local", "bin", "mcpproxy");
      expect(run.stdout).toContain(`Installed ${target}: mcpproxy ${VERSION}`);
      expect(run.stdout).toContain("is not on your PATH");
      expect(run.stdout).toContain("mcpproxy import");
      expect(Bun.spawnSync([target, "--version"], { stdout: "pipe" }).stdout.toString()).toStartWith(
        `mcpproxy ${VERSION} `,
      );
    }, 60_000);
  }

  test('the commands its "Next:" lines print work as written on a new machine with a client\'s config', async () => {
    const run = await install("dash", [], { MCPPROXY_INSTALL_BASE_URL: `${base}/good` });
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    const next = lines.findIndex((line) => line.startsWith("Next:"));
    expect(next).toBeGreaterThan(-1);
    const commands: string[] = [];
    for (const line of lines.slice(next + 1)) {
      if (!line.startsWith("  ")) break;
      commands.push(line.replace(/#.*$/, "").trim());
    }
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.join(" ")).toContain("mcpproxy import");
    // A person who uses Claude Desktop with one server, and nothing of mcpproxy's yet.
    const claude = join(run.home, ".config", "Claude");
    mkdirSync(claude, { recursive: true });
    writeFileSync(
      join(claude, "claude_desktop_config.json"),
      JSON.stringify({ mcpServers: { fixture: { command: process.execPath, args: [FIXTURE] } } }),
    );
    // The PATH the installer told them to set.
    const env = { PATH: `${join(run.home, ".local", "bin")}:/usr/local/bin:/usr/bin:/bin`, HOME: run.home };
    const outputs: string[] = [];
    for (const command of commands) {
      const result = await runProcess(["sh", "-c", command], env, run.home);
      outputs.push(result.stdout);
      if (result.code !== 0)
        throw new Error(`\`${command}\` exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
    }
    expect(outputs.join("\n")).toContain("1 of 1 servers indexed");
  }, 120_000);

  test("a tampered asset is refused and nothing is installed", async () => {
    const run = await install("dash", [], { MCPPROXY_INSTALL_BASE_URL: `${base}/tampered` });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`checksum mismatch for mcpproxy-${VERSION}-${HERE}.tar.gz`);
    expect(run.stderr).toContain("nothing was installed");
    expect(existsSync(join(run.home, ".local", "bin", "mcpproxy"))).toBe(false);
  }, 60_000);

  test("a platform the release has no build for gets a clear message naming what it has", async () => {
    const run = await install("dash", [], {
      MCPPROXY_INSTALL_BASE_URL: `${base}/good`,
      MCPPROXY_INSTALL_PLATFORM: "linux-riscv64",
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("this release has no build for linux-riscv64");
    expect(run.stderr).toContain("linux-x64");
    expect(run.stderr).toContain("--from-source");
  });

  test("--version that the release directory does not hold is refused", async () => {
    const run = await install("dash", ["--version", "v9.9.9"], { MCPPROXY_INSTALL_BASE_URL: `${base}/good` });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`has mcpproxy ${VERSION}, not 9.9.9`);
  });

  test("an existing install is upgraded in place; --prefix and --uninstall", async () => {
    const prefix = join(work, "opt-bin");
    mkdirSync(prefix);
    const old = join(prefix, "mcpproxy");
    writeFileSync(old, "#!/bin/sh\necho 'mcpproxy 0.0.1 (commit 000000000000, built 2020-01-01)'\n");
    chmodSync(old, 0o755);
    const run = await install("bash", ["--prefix", prefix, "--version", VERSION], {
      MCPPROXY_INSTALL_BASE_URL: `${base}/good`,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `Upgraded ${old}: mcpproxy 0.0.1 (commit 000000000000, built 2020-01-01) -> mcpproxy ${VERSION}`,
    );
    const removed = await install("dash", ["--uninstall"], { MCPPROXY_INSTALL_DIR: prefix });
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`Removed ${old}`);
    expect(existsSync(old)).toBe(false);
  }, 60_000);

  test("an unknown option is refused with the usage", async () => {
    const run = await install("dash", ["--prefx", "/tmp"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("unknown option: --prefx");
    expect(run.stderr).toContain("Usage: install.sh");
  });

  test("--from-source builds a clone with npm ci && npm run build and installs it", () => {
    const clone = join(work, "clone");
    expect(Bun.spawnSync(["git", "clone", "--quiet", ROOT, clone]).exitCode).toBe(0);
    const prefix = join(work, "from-source-bin");
    const run = Bun.spawnSync(["sh", join(clone, "install.sh"), "--from-source", "--prefix", prefix], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? work },
      stdout: "pipe",
      stderr: "pipe",
    });
    // stderr may carry npm's own warnings about the machine's npm config; the exit code decides.
    if (run.exitCode !== 0) throw new Error(`install.sh --from-source failed: ${run.stderr.toString()}`);
    // ...but not that a dependency wants a newer Node than package.json's engines (Node 20 here).
    expect(run.stderr.toString()).not.toContain("EBADENGINE");
    expect(run.stdout.toString()).toContain(
      `Installed ${join(prefix, "mcpproxy")}: mcpproxy ${VERSION} (commit `,
    );
  }, 300_000);
});
