import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse } from "jsonc-parser";
import {
  cleanupAfterEach,
  FIXTURE,
  FIXTURE_TOOLS,
  fixtureEntry,
  freePort,
  processesMatching,
  requireBinary,
  runCli,
  type Sandbox,
  watchOutput,
} from "./helpers.ts";

/**
 * The first minutes of a new user, through the compiled binary in a private HOME: `import` reads
 * the MCP clients' own config files where those clients keep them (Linux paths here), `doctor`
 * starts every server and says what to fix, and `mcpproxy` alone on a terminal says where to begin.
 */
setDefaultTimeout(60_000);
const scope = cleanupAfterEach();

function write(path: string, content: unknown) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
}

/** A HOME with Claude Desktop, Cursor, Claude Code and Windsurf configs, and a project with VS Code and .mcp.json files. */
function clientsSandbox(): { sandbox: Sandbox; project: string } {
  const sandbox = scope.sandbox();
  const home = sandbox.home;
  const project = join(sandbox.dir, "project");
  write(join(home, ".config", "Claude", "claude_desktop_config.json"), {
    mcpServers: {
      fixture: fixtureEntry(),
      memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
      mcpproxy: { command: "/usr/local/bin/mcpproxy", args: ["serve"] },
    },
  });
  write(join(home, ".cursor", "mcp.json"), {
    mcpServers: {
      memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
      fixture: fixtureEntry({ args: ["--name", "cursor-copy"] }),
      github: {
        url: "https://api.githubcopilot.com/mcp/",
        headers: { Authorization: "Bearer ${GITHUB_TOKEN}" },
      },
    },
  });
  write(join(home, ".claude.json"), {
    numStartups: 3,
    mcpServers: { "user-scoped": { type: "http", url: "http://127.0.0.1:9/mcp" } },
    projects: {
      [project]: {
        mcpServers: { "local-scoped": { type: "stdio", command: "uvx", args: ["mcp-server-time"] } },
      },
      "/elsewhere": { mcpServers: { "other-project": { command: "other" } } },
    },
  });
  write(join(home, ".codeium", "windsurf", "mcp_config.json"), {
    mcpServers: { docs: { serverUrl: "http://127.0.0.1:9/sse", disabled: true } },
  });
  write(
    join(project, ".vscode", "mcp.json"),
    `{
  // VS Code asks for the key when the server starts
  "inputs": [{ "type": "promptString", "id": "weather-key", "description": "Weather API key", "password": true }],
  "servers": {
    "weather": {
      "type": "stdio",
      "command": "node",
      "args": ["\${workspaceFolder}/weather.js"],
      "env": { "API_KEY": "\${input:weather-key}", "REGION": "\${env:WEATHER_REGION}" },
      "envFile": "\${workspaceFolder}/.env",
    },
    "events": { "type": "sse", "url": "http://127.0.0.1:9/events" },
  },
}`,
  );
  write(join(project, ".mcp.json"), {
    mcpServers: { "project-scoped": { command: "uvx", args: ["mcp-server-fetch"] } },
  });
  return { sandbox, project };
}

function run(sandbox: Sandbox, cwd: string, args: string[], env: Record<string, string> = {}) {
  return runCli(args, sandbox.env({ XDG_CONFIG_HOME: join(sandbox.home, ".config"), ...env }), cwd);
}

describe("mcpproxy import", () => {
  test("--dry-run shows every client's servers and the plan, and changes nothing", async () => {
    const { sandbox, project } = clientsSandbox();
    const result = await run(sandbox, project, ["import", "--dry-run"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain(
      "Claude Desktop: ~/.config/Claude/claude_desktop_config.json: fixture, memory, mcpproxy",
    );
    expect(out).toContain("Cursor: ~/.cursor/mcp.json: memory, fixture, github");
    // Claude Code: user scope, and the local scope of this project only.
    expect(out).toContain("Claude Code: ~/.claude.json: user-scoped, local-scoped");
    expect(out).not.toContain("other-project");
    expect(out).toContain(`Claude Code (project): ${join(project, ".mcp.json")}: project-scoped`);
    expect(out).toContain(`VS Code (project): ${join(project, ".vscode", "mcp.json")}: weather, events`);
    expect(out).toContain("Windsurf: ~/.codeium/windsurf/mcp_config.json: docs");
    expect(out).toContain("skip  memory (Cursor): already there as memory");
    expect(out).toContain("add   fixture-cursor (Cursor)");
    expect(out).toContain("(the name fixture is taken by a different server)");
    expect(out).toContain("skip  mcpproxy (Claude Desktop): it is mcpproxy itself");
    expect(out).toContain(
      'set WEATHER_KEY in the environment (VS Code asked for it as input "weather-key": Weather API key)',
    );
    expect(out).toContain("envFile");
    expect(out).toContain("Dry run: nothing was changed. Run without --dry-run to add 10 server(s).");
    expect(existsSync(join(sandbox.home, ".mcpproxy", "mcp_config.json"))).toBe(false);
  });

  test("merges into an existing config in place: comments kept, duplicates skipped, ${VAR} kept, a backup left", async () => {
    const { sandbox, project } = clientsSandbox();
    const original = `{
  // my own servers
  "mcpServers": {
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
  },
  "mcpproxy": { "routing": "call-tool" },
}
`;
    write(sandbox.configPath, original);
    const result = await run(sandbox, project, ["import", "--config", sandbox.configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("skip  memory (Claude Desktop): already there as memory");
    const backups = readdirSync(sandbox.dir).filter((name) => name.startsWith("mcp_config.json.bak-"));
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(sandbox.dir, backups[0]!), "utf8")).toBe(original);
    const text = readFileSync(sandbox.configPath, "utf8");
    expect(text).toContain("// my own servers");
    expect(statSync(sandbox.configPath).mode & 0o777).toBe(0o600);
    const config = parse(text, [], { allowTrailingComma: true }) as {
      mcpServers: Record<string, Record<string, unknown>>;
      mcpproxy: unknown;
    };
    expect(Object.keys(config.mcpServers).sort()).toEqual(
      [
        "events",
        "fixture",
        "fixture-cursor",
        "github",
        "local-scoped",
        "memory",
        "project-scoped",
        "user-scoped",
        "weather",
        "docs",
      ].sort(),
    );
    expect(config.mcpproxy).toEqual({ routing: "call-tool" });
    expect(config.mcpServers.github).toEqual({
      url: "https://api.githubcopilot.com/mcp/",
      headers: { Authorization: "Bearer ${GITHUB_TOKEN}" },
    });
    expect(config.mcpServers.weather).toEqual({
      command: "node",
      args: [join(project, "weather.js")],
      env: { API_KEY: "${WEATHER_KEY}", REGION: "${WEATHER_REGION}" },
      cwd: project,
    });
    expect(config.mcpServers.events).toEqual({ url: "http://127.0.0.1:9/events", transport: "sse" });
    expect(config.mcpServers.docs).toEqual({ url: "http://127.0.0.1:9/sse", enabled: false });
    expect(config.mcpServers["user-scoped"]).toEqual({ url: "http://127.0.0.1:9/mcp" });

    // A second import finds everything there already.
    const again = await run(sandbox, project, ["import", "--config", sandbox.configPath]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("Nothing to add.");
    expect(readFileSync(sandbox.configPath, "utf8")).toBe(text);

    // What import wrote is a config mcpproxy loads (the variables the notes named set).
    const tools = await run(
      sandbox,
      project,
      ["tools", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      {
        GITHUB_TOKEN: "x",
        WEATHER_KEY: "y",
        WEATHER_REGION: "eu",
      },
    );
    expect(tools.stderr).toBe("");
    expect(tools.code).toBe(0);
  });

  test("a project's servers run in the project: its directory is recorded as their cwd, so relative paths work", async () => {
    const sandbox = scope.sandbox();
    const project = join(sandbox.dir, "project");
    // A server started by a relative path, as projects write them (`node ./server.js`).
    write(join(project, "server.ts"), `await import(${JSON.stringify(FIXTURE)});\n`);
    const local = (name: string) => ({ command: process.execPath, args: ["./server.ts", "--name", name] });
    write(join(project, ".mcp.json"), { mcpServers: { "claude-local": local("claude-local") } });
    write(join(project, ".cursor", "mcp.json"), { mcpServers: { "cursor-local": local("cursor-local") } });
    write(join(project, ".vscode", "mcp.json"), {
      servers: { "vscode-local": { type: "stdio", ...local("vscode-local"), cwd: "." } },
    });
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const imported = await run(sandbox, project, ["import", flags[0]!, flags[1]!]);
    expect(imported.code).toBe(0);
    const servers = (
      parse(readFileSync(sandbox.configPath, "utf8")) as { mcpServers: Record<string, { cwd?: string }> }
    ).mcpServers;
    expect(Object.fromEntries(Object.entries(servers).map(([name, entry]) => [name, entry.cwd]))).toEqual({
      "claude-local": project,
      "cursor-local": project,
      "vscode-local": project,
    });
    // Started from anywhere else, they still find ./server.ts.
    const indexed = await run(sandbox, sandbox.dir, ["index", ...flags]);
    expect(indexed.stdout).toContain(`ok      claude-local: ${FIXTURE_TOOLS} tools`);
    expect(indexed.stdout).toContain(`ok      cursor-local: ${FIXTURE_TOOLS} tools`);
    expect(indexed.stdout).toContain(`ok      vscode-local: ${FIXTURE_TOOLS} tools`);
    expect(indexed.code).toBe(0);

    // A project file named with --from belongs to its project too.
    const named = scope.sandbox();
    const fromFile = await run(named, sandbox.dir, [
      "import",
      "--from",
      join(project, ".cursor", "mcp.json"),
      "--config",
      named.configPath,
    ]);
    expect(fromFile.code).toBe(0);
    expect(
      (parse(readFileSync(named.configPath, "utf8")) as { mcpServers: Record<string, { cwd?: string }> })
        .mcpServers["cursor-local"]?.cwd,
    ).toBe(project);
  });

  test("--from one client or a file; an unknown source is a usage error", async () => {
    const { sandbox, project } = clientsSandbox();
    const cursor = await run(sandbox, project, ["import", "--from", "cursor", "--dry-run"]);
    expect(cursor.stdout).toContain("Cursor: ~/.cursor/mcp.json");
    expect(cursor.stdout).not.toContain("Claude Desktop");
    const file = await run(sandbox, project, ["import", "--from", ".vscode/mcp.json", "--dry-run"]);
    expect(file.stdout).toContain("add   weather (mcp.json)");
    const bad = await run(sandbox, project, ["import", "--from", "zed"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "--from zed: no such client or file. Clients: claude-desktop, claude-code, cursor, vscode, windsurf",
    );
  });

  test("--snippet prints the entry that points each client at this binary", async () => {
    const { sandbox, project } = clientsSandbox();
    const result = await run(sandbox, project, ["import", "--snippet", "--config", sandbox.configPath]);
    expect(result.code).toBe(0);
    const [first] = result.stdout.split("\n\n");
    const json = JSON.parse(first!.slice(first!.indexOf("{")));
    expect(json).toEqual({
      mcpServers: { mcpproxy: { command: requireBinary(), args: ["serve", "--config", sandbox.configPath] } },
    });
    expect(result.stdout).toContain('"type": "stdio"');
    expect(result.stdout).toContain(`claude mcp add --scope user mcpproxy -- ${requireBinary()} serve`);
  });
});

describe("mcpproxy import of the same server in two clients (issue 34, item 11)", () => {
  test("run from $HOME: each file read once; the same command with another env is a server of its own, and said so", async () => {
    const sandbox = scope.sandbox();
    const home = sandbox.home;
    const memory = (file: string) => fixtureEntry({ env: { MEMORY_FILE_PATH: join(home, file) } });
    write(join(home, ".config", "Claude", "claude_desktop_config.json"), {
      mcpServers: { memory: memory("claude-memory.json"), fixture: fixtureEntry() },
    });
    write(join(home, ".cursor", "mcp.json"), {
      mcpServers: {
        memory: memory("cursor-memory.json"),
        fixture: fixtureEntry(),
        notes: memory("claude-memory.json"),
      },
    });
    // From $HOME, Cursor's user file and its project file are the same file.
    const result = await run(sandbox, home, ["import"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out.split("\n").filter((line) => line.includes("~/.cursor/mcp.json"))).toEqual([
      "  Cursor: ~/.cursor/mcp.json: memory, fixture, notes",
    ]);
    expect(out).not.toContain("Cursor (project)");
    expect(out).toContain("Found 5 server(s):");
    expect(out).toContain(
      "add   memory-cursor (Cursor): " +
        `${process.execPath} ${FIXTURE} (the name memory is taken: memory runs the same command with a ` +
        "different env (MEMORY_FILE_PATH), so this is a server of its own)",
    );
    expect(out).toContain("skip  fixture (Cursor): already there as fixture");
    expect(out).toContain("skip  notes (Cursor): already there as memory");
    expect(out).toContain("Added 3 server(s) to ~/.mcpproxy/mcp_config.json.");
    const configPath = join(home, ".mcpproxy", "mcp_config.json");
    const servers = parse(readFileSync(configPath, "utf8")).mcpServers as Record<
      string,
      { env?: Record<string, string> }
    >;
    expect(Object.keys(servers)).toEqual(["memory", "fixture", "memory-cursor"]);
    expect(servers.memory?.env).toEqual({ MEMORY_FILE_PATH: join(home, "claude-memory.json") });
    expect(servers["memory-cursor"]?.env).toEqual({ MEMORY_FILE_PATH: join(home, "cursor-memory.json") });

    const again = await run(sandbox, home, ["import"]);
    expect(again.stdout).toContain("Nothing to add.");
    // doctor reads Cursor's file once too, and finds its servers imported.
    const doctor = await run(sandbox, home, ["doctor", "--data-dir", sandbox.dataDir]);
    const cursorLines = doctor.stdout.split("\n").filter((line) => line.includes("client Cursor"));
    expect(cursorLines).toHaveLength(1);
    expect(cursorLines[0]).toContain("all of them in mcpproxy's config already");
  });

  test("a URL server with other headers is a server of its own too; the same URL and headers is skipped", async () => {
    const sandbox = scope.sandbox();
    const project = join(sandbox.dir, "project");
    mkdirSync(project);
    const github = (token: string) => ({
      url: "https://api.githubcopilot.com/mcp/",
      headers: { Authorization: `Bearer \${${token}}` },
    });
    write(join(sandbox.home, ".config", "Claude", "claude_desktop_config.json"), {
      mcpServers: { github: github("WORK_TOKEN") },
    });
    write(join(sandbox.home, ".cursor", "mcp.json"), {
      mcpServers: { gh: github("HOME_TOKEN"), "github-again": github("WORK_TOKEN") },
    });
    const result = await run(sandbox, project, ["import", "--dry-run", "--config", sandbox.configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "add   gh (Cursor): https://api.githubcopilot.com/mcp/ (github has the same URL with different " +
        "headers (Authorization): this is a server of its own)",
    );
    expect(result.stdout).toContain("skip  github-again (Cursor): already there as github");
  });
});

describe("on a new machine, where ~/.mcpproxy does not exist yet", () => {
  /** A HOME holding only one client's config: no ~/.mcpproxy, as after a fresh install. */
  function newMachine(client: "claude" | "cursor") {
    const sandbox = scope.sandbox();
    const path =
      client === "claude"
        ? join(sandbox.home, ".config", "Claude", "claude_desktop_config.json")
        : join(sandbox.home, ".cursor", "mcp.json");
    write(path, { mcpServers: { fixture: fixtureEntry() } });
    expect(existsSync(join(sandbox.home, ".mcpproxy"))).toBe(false);
    return sandbox;
  }

  for (const [client, args] of [
    ["claude", ["import"]],
    ["cursor", ["import", "--from", "cursor"]],
  ] as const) {
    test(`\`mcpproxy ${args.join(" ")}\` creates ~/.mcpproxy (0700) and writes the config into it`, async () => {
      const sandbox = newMachine(client);
      const result = await run(sandbox, sandbox.home, [...args]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("Added 1 server(s) to ~/.mcpproxy/mcp_config.json.");
      const dir = join(sandbox.home, ".mcpproxy");
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      const configPath = join(dir, "mcp_config.json");
      expect(statSync(configPath).mode & 0o777).toBe(0o600);
      expect(Object.keys(parse(readFileSync(configPath, "utf8")).mcpServers)).toEqual(["fixture"]);
      // The README's next step works on what import wrote.
      const doctor = await run(sandbox, sandbox.home, ["doctor"]);
      expect(doctor.stdout).toContain("ok    server fixture");
    });
  }
});

describe("mcpproxy doctor", () => {
  test("starts every server, names what is broken with a fix, checks the index and the clients; exit 1", async () => {
    const { sandbox, project } = clientsSandbox();
    sandbox.writeConfig({
      mcpServers: {
        good: fixtureEntry(),
        missing: { command: "no-such-mcp-server-command", args: [] },
        crashing: fixtureEntry({ args: ["--mode", "exit-on-init"] }),
        off: { ...fixtureEntry(), enabled: false },
      },
    });
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const before = await run(sandbox, project, ["doctor", ...flags]);
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/ok {2}\s+config .*given with --config: 4 server\(s\), 3 enabled/);
    expect(before.stdout).toMatch(
      new RegExp(
        `ok {2}\\s+server good\\s+started and answered initialize in \\d+ ms: ${FIXTURE_TOOLS} tool\\(s\\); it is \\S+ [\\d.]+, protocol \\d{4}-\\d\\d-\\d\\d`,
      ),
    );
    expect(before.stdout).toContain("FAIL  server missing");
    expect(before.stdout).toContain('its command "no-such-mcp-server-command" is not on PATH');
    expect(before.stdout).toContain("FAIL  server crashing");
    expect(before.stdout).toContain("server off");
    expect(before.stdout).toContain("disabled");
    expect(before.stdout).toContain("not created yet");
    expect(before.stdout).toContain("does not use mcpproxy");
    // Claude Desktop's fixture is in mcpproxy's config as "good"; its memory server is not.
    expect(before.stdout).toMatch(
      /Claude Desktop .*claude_desktop_config\.json uses mcpproxy and also lists 2 server\(s\) of its own, 1 not imported/,
    );
    expect(before.stdout).toContain("`mcpproxy import --from cursor`");
    expect(before.stdout).toContain("2 problem(s) to fix");

    await run(sandbox, project, ["index", ...flags]);
    const json = await run(sandbox, project, ["doctor", "--json", ...flags]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as {
      ok: boolean;
      findings: { area: string; subject: string; status: string; detail: string; fix?: string }[];
    };
    expect(report.ok).toBe(false);
    const data = report.findings.find((finding) => finding.area === "data")!;
    expect(data.status).toBe("warn");
    expect(data.detail).toContain(`index holds ${FIXTURE_TOOLS} tool(s) from 1 server(s)`);
    expect(data.detail).toContain("not indexed yet: crashing, missing");
    const missing = report.findings.find((finding) => finding.subject === "missing")!;
    expect(missing).toMatchObject({ status: "fail", fix: "install it, or give its full path in the config" });
    // The default search: the encoder is checked, and said to serve only the weak requests.
    expect(report.findings.find((finding) => finding.area === "embedder")).toMatchObject({
      subject: "use (auto search)",
      status: "ok",
      detail: expect.stringContaining("loaded only for the requests BM25 answers weakly"),
    });
  });

  test("a healthy set-up exits 0", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { good: fixtureEntry() } });
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    await run(sandbox, sandbox.dir, ["index", ...flags]);
    const result = await run(sandbox, sandbox.dir, ["doctor", ...flags]);
    expect(result.stdout).toContain("Everything checked is fine.");
    expect(result.code).toBe(0);
  });

  test("a broken config is one finding that quotes the problem", async () => {
    const sandbox = scope.sandbox();
    write(sandbox.configPath, { mcpServer: {} });
    const result = await run(sandbox, sandbox.dir, ["doctor", "--config", sandbox.configPath]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAIL  config");
    expect(result.stdout).toContain("did you mean `mcpServers`");
  });
});

describe("mcpproxy doctor as servers answer", () => {
  test("prints a fast server's line while a slow one is still starting, then a summary in config order", async () => {
    const sandbox = scope.sandbox();
    const slowProcess = `aslow-${process.pid}-${Date.now()}`;
    const endSlow = () => {
      for (const pid of processesMatching(slowProcess)) process.kill(pid, "SIGKILL");
    };
    scope.defer(endSlow);
    sandbox.writeConfig({
      mcpServers: {
        // First in config order, last to finish: it never answers, until the test ends it.
        aslow: { ...fixtureEntry({ args: ["--name", slowProcess, "--mode", "hang"] }), timeoutMs: 60_000 },
        fast: fixtureEntry(),
        zbroken: fixtureEntry({ args: ["--mode", "exit-on-init"] }),
      },
    });
    const child = Bun.spawn(
      [requireBinary(), "doctor", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      { env: sandbox.env(), cwd: sandbox.dir, stdout: "pipe", stderr: "pipe" },
    );
    scope.defer(() => child.kill("SIGKILL"));
    const stdout = watchOutput(child.stdout);
    watchOutput(child.stderr);
    await stdout.waitFor(/ok {4}server fast/, 20_000);
    // The slow server is still starting: its line and the summary come later.
    expect(child.exitCode).toBeNull();
    expect(stdout.text()).not.toContain("server aslow");
    expect(stdout.text()).not.toContain("problem(s) to fix");
    endSlow();
    expect(await child.exited).toBe(1);
    await stdout.done;
    const text = stdout.text();
    expect(text.indexOf("server fast")).toBeLessThan(text.indexOf("server aslow"));
    expect(text).toContain("FAIL  server aslow");
    expect(text.trimEnd().split("\n").pop()).toBe("2 problem(s) to fix: server aslow, server zbroken.");
  });

  test("hints fit the server: a URL with nothing behind it, a full command path with a typo", async () => {
    const sandbox = scope.sandbox();
    const port = await freePort();
    const program = join(sandbox.dir, "bin", "my-mcp-server");
    write(program, "#!/bin/sh\n");
    const typo = join(sandbox.dir, "bin", "my-mcp-sever");
    sandbox.writeConfig({
      mcpServers: {
        web: { url: `http://127.0.0.1:${port}/mcp?api_key=secret-value` },
        typo: { command: typo, args: [] },
        nodir: { command: "/no-such-dir/bin/server", args: [] },
      },
    });
    const result = await runCli(
      ["doctor", "--json", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(result.code).toBe(1);
    const findings = (
      JSON.parse(result.stdout) as { findings: { subject: string; detail: string; fix?: string }[] }
    ).findings;
    const of = (subject: string) => findings.find((finding) => finding.subject === subject)!;
    expect(of("web").fix).toBe(
      `nothing listens at http://127.0.0.1:${port}/mcp?api_key=***: start that server, or fix the host and port in its url`,
    );
    expect(of("typo").detail).toBe(`its command ${typo} does not exist`);
    expect(of("typo").fix).toBe(`fix the path in the config: did you mean ${program}?`);
    expect(of("nodir").detail).toBe(
      "its command /no-such-dir/bin/server does not exist: there is no directory /no-such-dir/bin",
    );
    for (const finding of findings) expect(finding.fix ?? "").not.toContain("run its command by hand");
    expect(result.stdout).not.toContain("secret-value");
  });

  test("a server that does not answer in time is said to be slow, a URL one and a command alike", async () => {
    const sandbox = scope.sandbox();
    // Accepts the connection and the request, and never answers.
    const silent = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Promise<Response>(() => {}),
    });
    scope.defer(() => silent.stop(true));
    const url = `http://127.0.0.1:${silent.port}/mcp`;
    sandbox.writeConfig({
      mcpServers: {
        quiet: { url, timeoutMs: 1_000 },
        sleepy: fixtureEntry({ args: ["--init-delay", "30000"], timeoutMs: 1_000 }),
      },
    });
    const result = await runCli(
      ["doctor", "--json", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(result.code).toBe(1);
    const findings = (JSON.parse(result.stdout) as { findings: { subject: string; fix?: string }[] })
      .findings;
    const fixOf = (subject: string) => findings.find((finding) => finding.subject === subject)?.fix;
    expect(fixOf("quiet")).toBe(
      `it did not answer in time: check that ${url} answers (\`curl -i ${url}\`), or raise timeoutMs`,
    );
    expect(fixOf("sleepy")).toBe(
      "it did not answer in time: run its command by hand to see what it waits for, or raise timeoutMs",
    );
  });
});

describe("mcpproxy with no arguments", () => {
  const script = Bun.which("script");
  test.skipIf(!script)("on a terminal: where the config is, how many servers, what to try", async () => {
    const { sandbox, project } = clientsSandbox();
    // util-linux `script` gives the binary a terminal, as a user's shell does.
    const child = Bun.spawn([script!, "-qc", requireBinary(), "/dev/null"], {
      env: sandbox.env(),
      cwd: project,
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(child.stdout).text();
    expect(await child.exited).toBe(0);
    expect(out).toContain("No config yet");
    expect(out).toContain("mcpproxy import");
    expect(out).toContain("mcpproxy doctor");
  });

  test("not on a terminal: the usage, exit 2", async () => {
    const sandbox = scope.sandbox();
    const result = await runCli([], sandbox.env());
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Usage: mcpproxy <command>");
  });
});
