import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * What each command evaluates when it starts: the modules reachable from an entry through static
 * imports. The build splits the binary at every `import()` (scripts/compile.ts), so a module reached
 * only through one is neither parsed nor run until that line runs; a static import anywhere on the
 * way makes it part of every start of that command again. `require()` inside a function and
 * type-only imports are not followed: neither runs anything at start.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const transpiler = new Bun.Transpiler({ loader: "ts" });

function startsWith(entry: string): { modules: string[]; packages: string[]; specifiers: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const specifiers = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    if (!file.endsWith(".ts")) return;
    const text = readFileSync(join(ROOT, file), "utf8").replace(/^#!.*/, "");
    for (const { kind, path } of transpiler.scanImports(text)) {
      if (kind !== "import-statement") continue;
      if (path.startsWith(".")) visit(relative(ROOT, resolve(dirname(join(ROOT, file)), path)));
      else {
        specifiers.add(path);
        if (!path.startsWith("node:") && !path.startsWith("bun:")) packages.add(packageOf(path));
      }
    }
  };
  visit(entry);
  return { modules: [...modules].sort(), packages: [...packages].sort(), specifiers: [...specifiers].sort() };
}

const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

/** What no lexical search, and no serve over stdio with the default settings, has any use for. */
const HEAVY_PACKAGES = [
  "ajv",
  "execa",
  "hono",
  "jose",
  "postgres",
  "prom-client",
  "@huggingface/tokenizers",
  "@huggingface/transformers",
  "@energetic-ai/core",
  "onnxruntime-web",
];

describe("what a command loads at start", () => {
  test("--version and --help load the command table and nothing of any command's implementation", () => {
    const { modules, packages } = startsWith("main.ts");
    expect(packages).toEqual([]);
    expect(modules.filter((file) => file.endsWith("-run.ts"))).toEqual([]);
    const outside = modules.filter(
      (file) =>
        !/^src\/cli\/[\w-]+\.ts$/.test(file) &&
        !["main.ts", "package.json", "src/errors.ts", "src/version.ts"].includes(file),
    );
    expect(outside).toEqual([]);
  });

  test("every command's implementation is out of the start-up path, and each is found", () => {
    const { modules } = startsWith("main.ts");
    const commands = modules.filter((file) => file.endsWith("-command.ts"));
    expect(commands.length).toBe(18);
    for (const command of commands) {
      const { modules: implementation } = startsWith(command.replace(/-command\.ts$/, "-run.ts"));
      expect(implementation.length).toBeGreaterThan(1);
    }
  });

  test("search loads no MCP SDK, schema validator, poisoning scanner, metrics, tracer, embedder library, store client or exec", () => {
    const { modules, packages } = startsWith("src/cli/search-run.ts");
    expect(packages.filter((name) => HEAVY_PACKAGES.includes(name))).toEqual([]);
    expect(packages.filter((name) => name.startsWith("@modelcontextprotocol/"))).toEqual([]);
    expect(modules.filter((file) => /^src\/(tracing|auth)\//.test(file))).toEqual([]);
    expect(modules).not.toContain("src/server/observe/metrics.ts");
    expect(modules).not.toContain("src/store/shared-store.ts");
    // Compiled as it loads; a search reviews no definition.
    expect(modules).not.toContain("src/security/poisoning-patterns.ts");
  });

  test("serve loads none of the proxy before it knows whether it bridges to the service", () => {
    const { modules, packages } = startsWith("src/cli/serve-run.ts");
    expect(packages.filter((name) => name.startsWith("@modelcontextprotocol/"))).toEqual([]);
    expect(modules.filter((file) => /^src\/(app|server|upstream|index|service)\//.test(file))).toEqual([]);
  });

  test("the stdio bridge loads no MCP SDK, no proxy and no child processes", () => {
    const { modules, packages, specifiers } = startsWith("src/service/attach-service.ts");
    expect(
      packages.filter((name) => name.startsWith("@modelcontextprotocol/") || HEAVY_PACKAGES.includes(name)),
    ).toEqual([]);
    expect(modules.filter((file) => /^src\/(app|upstream|index|routing)\//.test(file))).toEqual([]);
    expect(specifiers).not.toContain("node:child_process");
  });

  test("serve over stdio loads no HTTP stack, metrics, tracer, validator, store client, embedder or exec until asked", () => {
    const { modules, packages, specifiers } = startsWith("src/app/serve-proxy.ts");
    expect(packages.filter((name) => HEAVY_PACKAGES.includes(name))).toEqual([]);
    // The SDK's stdio client transport brings cross-spawn, node:stream and node:child_process (an
    // idle serve touched 0.9–1.3 MiB more of the binary with them); upstream stdio servers are
    // Bun's spawn (child-process-transport.ts).
    for (const unused of ["@modelcontextprotocol/client/stdio", "node:child_process", "node:stream"])
      expect(specifiers).not.toContain(unused);
    expect(packages).toContain("@modelcontextprotocol/server");
    for (const lazy of [
      "src/app/serve-http.ts",
      "src/server/transport/http-app.ts",
      "src/server/observe/metrics.ts",
      "src/tracing/otlp-exporter.ts",
      "src/tracing/otlp-json.ts",
      "src/store/shared-store.ts",
      "src/index/embedders/static-embedder.ts",
      "src/index/embedders/openai-embedder.ts",
    ])
      expect(modules).not.toContain(lazy);
  });
});
