import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { IGNORED_SERVER_KEYS, IGNORED_TOP_LEVEL_KEYS } from "../src/config/known-keys.ts";
import { ROOT, requireBinary } from "./helpers.ts";

/**
 * The README, the guides in docs/ and the binary must not drift apart in silence: the set-up
 * commands are the ones CI runs, the commands and flags the docs show are ones the binary accepts,
 * the configuration reference names exactly the keys the binary knows and the variables it reads,
 * and every link between the files resolves. Each check reads the files and asks the compiled
 * binary at test time; none depends on timing.
 */

const REFERENCE = "docs/configuration.md";
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

// ---- Markdown, as much of it as the checks need ----

interface Markdown {
  /** Lines outside fenced code blocks, with their line numbers. */
  prose: { line: number; text: string }[];
  /** Fenced code blocks, in order, each after the prose line it follows. */
  blocks: { line: number; lang: string; lines: string[] }[];
}

function parseMarkdown(text: string): Markdown {
  const prose: Markdown["prose"] = [];
  const blocks: Markdown["blocks"] = [];
  let open: Markdown["blocks"][number] | undefined;
  let fence = "";
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    const marker = /^\s*(`{3,}|~{3,})(.*)$/.exec(raw);
    if (open) {
      if (marker && marker[1]!.startsWith(fence) && marker[2]!.trim() === "") {
        blocks.push(open);
        open = undefined;
      } else open.lines.push(raw);
      return;
    }
    if (marker) {
      fence = marker[1]!;
      open = { line, lang: marker[2]!.trim(), lines: [] };
      return;
    }
    prose.push({ line, text: raw });
  });
  return { prose, blocks };
}

/** The contents of the code spans of a line (`a`, ``a `b` c``). */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/(`+)(.+?)\1(?!`)/g)].map((match) => match[2]!.trim());
}

/** The first fenced block after the heading `## title`. */
function blockAfterHeading(markdown: Markdown, title: string): string[] {
  const heading = markdown.prose.find((entry) => entry.text.trim() === `## ${title}`);
  if (!heading) throw new Error(`no heading "## ${title}"`);
  const block = markdown.blocks.find((candidate) => candidate.line > heading.line);
  if (!block) throw new Error(`no code block after "## ${title}"`);
  return block.lines;
}

/** Command lines of a shell block: comments and prompts dropped, continuations joined. */
function shellCommands(lines: readonly string[]): string[] {
  const joined = lines.join("\n").replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((line) =>
      line
        .replace(/^\s*\$\s+/, "")
        .replace(/(^|\s)#.*$/, "")
        .trim(),
    )
    .filter((line) => line !== "");
}

/** Words of a command line as a shell splits them (quotes), up to a comment. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const match of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    const word = match[1] ?? match[2] ?? match[3]!;
    if (match[3]?.startsWith("#")) break;
    out.push(word);
  }
  return out;
}

/** The markdown files the checks cover: the README and the guides (not the research notes). */
function guideFiles(options: { research: boolean }): string[] {
  const files = ["README.md"];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const path = `${dir}/${name}`;
      if (statSync(join(ROOT, path)).isDirectory()) {
        if (name !== "research" || options.research) walk(path);
      } else if (name.endsWith(".md")) files.push(path);
    }
  };
  walk("docs");
  return files;
}

function sourceFiles(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .map((name) => `${dir}/${name}`)
    .filter((path) => keep(path) && statSync(join(ROOT, path)).isFile());
}

// ---- The binary ----

function runBinary(args: string[], cwd?: string) {
  const home = mkdtempSync(join(tmpdir(), "mcpproxy-docs-"));
  try {
    const result = Bun.spawnSync([requireBinary(), ...args], {
      cwd: cwd ?? home,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
      timeout: 30_000,
    });
    return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const helpCache = new Map<string, string>();
/** `mcpproxy [command] --help`, once per command. */
function helpOf(command?: string): string {
  const key = command ?? "";
  const cached = helpCache.get(key);
  if (cached !== undefined) return cached;
  const result = runBinary(command ? [command, "--help"] : ["--help"]);
  if (result.code !== 0) throw new Error(`mcpproxy ${key} --help exited ${result.code}: ${result.stderr}`);
  helpCache.set(key, result.stdout);
  return result.stdout;
}

function commandsOfHelp(): Set<string> {
  const help = helpOf();
  const section = help.slice(help.indexOf("Commands:"), help.indexOf("Options:"));
  return new Set([...section.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((match) => match[1]!));
}

const flagsOf = (help: string) => new Set([...help.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0]));

/** What is wrong with one `mcpproxy …` command line: an unknown command or flag, or nothing. */
function commandProblems(line: string): string[] {
  const parts = words(line);
  while (parts.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(parts[0]!)) parts.shift();
  const program = parts.shift();
  if (program !== "mcpproxy" && !program?.endsWith("/mcpproxy")) return [];
  const command = parts[0];
  if (command === undefined) return [];
  if (command.startsWith("-")) {
    return flagsOf(helpOf()).has(command.replace(/=.*/, ""))
      ? []
      : [`\`${line}\`: mcpproxy --help names no ${command}`];
  }
  // `mcpproxy 0.1.0 (commit …)` is output, not a command.
  if (!/^[a-z]+$/.test(command)) return [];
  if (!commandsOfHelp().has(command)) return [`\`${line}\`: mcpproxy --help lists no command ${command}`];
  const end = parts.indexOf("--");
  const flags = (end === -1 ? parts : parts.slice(0, end)).filter((word) => word.startsWith("--"));
  const known = flagsOf(helpOf(command));
  return flags
    .map((flag) => flag.replace(/=.*/, ""))
    .filter((flag) => !known.has(flag))
    .map((flag) => `\`${line}\`: mcpproxy ${command} --help names no ${flag}`);
}

/** Every `mcpproxy …` command a file shows, in code spans and code blocks. */
function commandsShown(path: string): string[] {
  const markdown = parseMarkdown(read(path));
  const fromSpans = markdown.prose.flatMap((entry) => codeSpans(entry.text));
  const fromBlocks = markdown.blocks.flatMap((block) => shellCommands(block.lines));
  return [...fromSpans, ...fromBlocks].filter((text) => /(^|[\s/=])mcpproxy\s/.test(text));
}

// ---- The keys the binary knows ----

/**
 * The binary's own answer to "which keys are there": a config with a key no one would write at every
 * level, checked by the compiled binary, whose error names the keys it knows at each level
 * (`unknown key (known: …)`), or the object's shape where the value has a fixed one (`oauth`,
 * `rateLimit`, a plugin entry). The keys other clients write and mcpproxy leaves alone pass
 * unnamed; src/config/known-keys.ts lists those.
 */
function keysTheBinaryKnows(): { known: Set<string>; levels: Set<string> } {
  const z = "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";
  const probe = {
    [z]: 1,
    mcpServers: {
      a: {
        url: "https://probe.example/mcp",
        [z]: 1,
        oauth: { [z]: 1 },
        rateLimit: { perMinute: 1, [z]: 1 },
        tools: { t: { [z]: 1, annotations: { [z]: 1 } } },
      },
    },
    mcpproxy: {
      [z]: 1,
      search: { [z]: 1, llm: { [z]: 1 } },
      traces: { [z]: 1 },
      httpAuth: { [z]: 1, issuer: "https://issuer.example", audience: "a", access: [{ [z]: 1 }] },
      profiles: { p: { [z]: 1 } },
      plugins: [{ path: "probe.ts", [z]: 1 }],
    },
  };
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-docs-probe-"));
  try {
    const config = join(dir, "mcp_config.json");
    writeFileSync(config, JSON.stringify(probe));
    const result = runBinary(["tools", "--config", config, "--data-dir", join(dir, "data")], dir);
    expect(result.code).toBe(2);
    if (result.stderr.includes("did you mean"))
      throw new Error(`the probe key is too close to a known one:\n${result.stderr}`);
    const known = new Set<string>();
    const levels = new Set<string>();
    for (const [, path, problem] of result.stderr.matchAll(/^\s+(\S+): (.*)$/gm)) {
      const unknown = /^unknown key \(known: (.*)\)$/.exec(problem!);
      let parent: string;
      let keys: string[];
      if (unknown) {
        if (!path!.endsWith(`.${z}`) && path !== z) continue;
        parent = normalize(path === z ? "" : path!.slice(0, -(z.length + 1)));
        keys = unknown[1]!.split(", ");
      } else if (problem!.includes('{"')) {
        parent = normalize(path!);
        const shape = problem!.slice(problem!.indexOf("{"), problem!.lastIndexOf("}") + 1);
        keys = [...shape.matchAll(/"([A-Za-z_$][\w$]*)"/g)].map((match) => match[1]!);
      } else continue;
      levels.add(parent);
      for (const key of keys) known.add(parent ? `${parent}.${key}` : key);
    }
    return { known, levels };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A probe path in the reference's spelling: `mcpServers.<name>.tools.<tool>`, `access[]`. */
function normalize(path: string): string {
  const out: string[] = [];
  const segments = path.split(".").filter((segment) => segment !== "");
  segments.forEach((segment, index) => {
    const previous = segments[index - 1];
    if (/^\d+$/.test(segment)) out[out.length - 1] += "[]";
    else if (previous === "mcpServers" || previous === "profiles") out.push("<name>");
    else if (previous === "tools" && segments[0] === "mcpServers") out.push("<tool>");
    else out.push(segment);
  });
  return out.join(".");
}

/**
 * The keys the reference's tables name. A table of keys has a first header cell starting with
 * "key", naming the prefix of its keys in a code span (`mcpproxy.`); none means the top level. The
 * first cell of each row holds the keys, as code spans.
 */
function keysOfReference(): Map<string, number> {
  const keys = new Map<string, number>();
  const markdown = parseMarkdown(read(REFERENCE));
  let prefix: string | undefined;
  let row = 0;
  for (const { line, text } of markdown.prose) {
    if (!text.startsWith("|")) {
      prefix = undefined;
      row = 0;
      continue;
    }
    const cells = text.split(/(?<!\\)\|/).slice(1, -1);
    row++;
    if (row === 1) {
      const head = cells[0]!.trim();
      prefix = /^key\b/i.test(head) ? (codeSpans(head)[0] ?? "") : undefined;
      continue;
    }
    if (row === 2 || prefix === undefined) continue;
    for (const key of codeSpans(cells[0]!)) keys.set(prefix + key, line);
  }
  return keys;
}

// ---- Variables ----

const VARIABLE = /\b(?:MCPPROXY|OTEL)_[A-Z0-9_]*[A-Z0-9]\b/g;

/** `MCPPROXY_*` and `OTEL_*` names in `src/`, outside tests, that are not names of constants in the code. */
function variablesOfSource(): Set<string> {
  const files = sourceFiles("src", (path) => path.endsWith(".ts") && !path.endsWith(".test.ts"));
  expect(files.length).toBeGreaterThan(50);
  const texts = files.map((path) => read(path));
  const constants = new Set(
    texts.flatMap((text) =>
      [...text.matchAll(/\b(?:const|let|var)\s+((?:MCPPROXY|OTEL)_\w+)/g)].map((match) => match[1]!),
    ),
  );
  return new Set(texts.flatMap((text) => text.match(VARIABLE) ?? []).filter((name) => !constants.has(name)));
}

const variablesOf = (text: string) => new Set(text.match(VARIABLE) ?? []);

// ---- Links ----

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of parseMarkdown(read(path)).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const plain = heading[1]!.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = plain
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function brokenLinks(path: string): string[] {
  const problems: string[] = [];
  for (const { line, text } of parseMarkdown(read(path)).prose) {
    const withoutCode = text.replace(/(`+)(.+?)\1(?!`)/g, "");
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file, anchor] = target.split("#") as [string, string | undefined];
      const resolved = file === "" ? join(ROOT, path) : resolve(ROOT, dirname(path), file);
      const where = `${path}:${line} → ${target}`;
      if (!resolved.startsWith(ROOT) || !existsSync(resolved)) {
        problems.push(`${where}: no such file`);
        continue;
      }
      if (anchor && resolved.endsWith(".md") && !anchorsOf(relative(ROOT, resolved)).has(anchor))
        problems.push(`${where}: no heading with that anchor`);
    }
  }
  return problems;
}

// ---- The checks ----

describe("the README and docs/ are in step with the binary", () => {
  test("every config key the binary knows is in the reference's tables, and every key they name is one it knows", () => {
    const { known, levels } = keysTheBinaryKnows();
    // Every level the probe asked about answered; if one stops naming its keys, say so here.
    expect([...levels].sort()).toEqual(
      [
        "",
        "mcpServers.<name>",
        "mcpServers.<name>.oauth",
        "mcpServers.<name>.rateLimit",
        "mcpServers.<name>.tools.<tool>",
        "mcpServers.<name>.tools.<tool>.annotations",
        "mcpproxy",
        "mcpproxy.httpAuth",
        "mcpproxy.httpAuth.access[]",
        "mcpproxy.plugins[]",
        "mcpproxy.profiles.<name>",
        "mcpproxy.search",
        "mcpproxy.search.llm",
        "mcpproxy.traces",
      ].sort(),
    );
    expect(known.size).toBeGreaterThan(120);
    const leftAlone = [
      ...Object.keys(IGNORED_TOP_LEVEL_KEYS),
      ...Object.keys(IGNORED_SERVER_KEYS).map((key) => `mcpServers.<name>.${key}`),
    ];
    const documented = keysOfReference();
    const missing = [...known, ...leftAlone].filter((key) => !documented.has(key));
    expect(missing, `keys the binary knows that ${REFERENCE} lacks`).toEqual([]);
    const unknown = [...documented.keys()].filter((key) => !known.has(key) && !leftAlone.includes(key));
    expect(
      unknown.map((key) => `${key} (line ${documented.get(key)})`),
      `keys ${REFERENCE} names that the binary does not know`,
    ).toEqual([]);
  }, 60_000);

  test("every MCPPROXY_* and OTEL_* variable src/ reads is in the reference, and it names no other", () => {
    const inSource = variablesOfSource();
    const documented = variablesOf(read(REFERENCE));
    expect(inSource.size).toBeGreaterThan(50);
    expect(
      [...inSource].filter((name) => !documented.has(name)).sort(),
      `variables src/ reads that ${REFERENCE} lacks`,
    ).toEqual([]);
    expect(
      [...documented].filter((name) => !inSource.has(name)).sort(),
      `variables ${REFERENCE} names that src/ never reads`,
    ).toEqual([]);
  }, 30_000);

  test("every MCPPROXY_* variable the README and docs name exists in the repository", () => {
    const places = [
      ...sourceFiles("src", (path) => path.endsWith(".ts")),
      ...sourceFiles("tests", (path) => /\.(ts|sh)$/.test(path)),
      ...sourceFiles("bench", (path) => path.endsWith(".ts")),
      ...sourceFiles("scripts", (path) => /\.(ts|sh|mjs)$/.test(path)),
      ...sourceFiles("examples", (path) => path.endsWith(".json")),
      ...sourceFiles(".ci", () => true),
      "install.sh",
    ];
    const existing = new Set(places.flatMap((path) => [...variablesOf(read(path))]));
    const named = guideFiles({ research: true }).flatMap((path) =>
      [...variablesOf(read(path))].map((name) => ({ path, name })),
    );
    expect(named.length).toBeGreaterThan(100);
    expect(
      named.filter(({ name }) => !existing.has(name)).map(({ path, name }) => `${path}: ${name}`),
    ).toEqual([]);
  }, 30_000);

  test("the README's two set-up commands are the ones .ci/run runs, in that order", () => {
    const readme = shellCommands(blockAfterHeading(parseMarkdown(read("README.md")), "From a clone"));
    expect(readme).toEqual(["npm ci", "npm test"]);
    const ci = read(".ci/run")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => /^npm\s/.test(line))
      .map((line) => words(line).slice(0, 2).join(" "));
    expect(ci.slice(0, 2)).toEqual(readme);
  }, 30_000);

  test("the README's first two minutes are commands and flags the binary accepts", () => {
    const lines = shellCommands(blockAfterHeading(parseMarkdown(read("README.md")), "First two minutes"));
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(words(line)[0]).toBe("mcpproxy");
    expect(lines.flatMap(commandProblems)).toEqual([]);
  }, 60_000);

  test("every mcpproxy command and flag the README and guides show is one the binary's --help names", () => {
    const shown = guideFiles({ research: false })
      .filter((path) => path !== "docs/architecture.md")
      .flatMap((path) => commandsShown(path).map((line) => ({ path, line })));
    expect(shown.length).toBeGreaterThan(50);
    expect(
      shown.flatMap(({ path, line }) => commandProblems(line).map((problem) => `${path}: ${problem}`)),
    ).toEqual([]);
  }, 120_000);

  test("every relative link of the README, the docs, SECURITY.md and plugins/README.md resolves", () => {
    const files = [...guideFiles({ research: true }), "SECURITY.md", "plugins/README.md"];
    expect(files.length).toBeGreaterThan(15);
    expect(files.flatMap(brokenLinks)).toEqual([]);
  }, 30_000);
});
