import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client as V2Client } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  eventually,
  fixtureEntry,
  processesMatching,
  ROOT,
  requireBinary,
  runCli,
  runProcess,
  type Sandbox,
} from "./helpers.ts";

setDefaultTimeout(120_000);

/**
 * Issue 38: one proxy per person. `mcpproxy start` runs the service in the background, `status`
 * and `stop` find it through its data dir, and every `mcpproxy serve` over stdio (what a client
 * launches) attaches to it as a thin bridge: one set of upstream servers whatever the number of
 * clients, each client's session its own. All through the compiled binary and real clients.
 */
const scope = cleanupAfterEach();

interface Status {
  running: boolean;
  url: string | null;
  pid: number | null;
  since: string | null;
  servers: { name: string; state: string; tools?: number }[];
  sessions?: number;
}

/** A sandbox whose fixture server carries a mark of its own, so its processes can be counted. */
function serviceSandbox(settings: Record<string, unknown> = {}) {
  const sandbox = scope.sandbox();
  const mark = `svc-${crypto.randomUUID().slice(0, 8)}`;
  sandbox.writeConfig({
    mcpproxy: settings,
    mcpServers: { fx: fixtureEntry({ args: ["--relay-tools", "--name", mark] }) },
  });
  const cli = (...args: string[]) =>
    runCli([...args, "--config", sandbox.configPath, "--data-dir", sandbox.dataDir], sandbox.env());
  const status = async () => JSON.parse((await cli("status", "--json")).stdout) as Status;
  // Whatever a test leaves running is stopped, and killed if it will not stop.
  scope.defer(async () => {
    const record = recordOf(sandbox);
    await cli("stop");
    if (record && isAlive(record.pid)) process.kill(record.pid, "SIGKILL");
  });
  return {
    sandbox,
    cli,
    status,
    upstreams: () => processesMatching(mark).length,
    processesOf: () => processesMatching(mark),
    /** What the fixture's echo answers (it names itself by its mark). */
    echoed: (message: string) => `${mark} echo: ${message}`,
  };
}

function recordOf(sandbox: Sandbox): { pid: number; url: string } | undefined {
  try {
    return JSON.parse(readFileSync(join(sandbox.dataDir, "service.json"), "utf8"));
  } catch {
    return undefined;
  }
}

/** Running: alive and not a zombie (a service this runner adopted and has not reaped has ended). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

const serveArgs = (sandbox: Sandbox, more: string[] = []) => [
  "serve",
  "--config",
  sandbox.configPath,
  "--data-dir",
  sandbox.dataDir,
  ...more,
];

/** An SDK v1 client over stdio (`serve`), with a model that names itself in its answers. */
async function v1Client(sandbox: Sandbox, name: string, more: string[] = []) {
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: serveArgs(sandbox, more),
    env: sandbox.env(),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name, version: "1" }, { capabilities: { sampling: {} } });
  const asked: string[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const first = request.params.messages[0]?.content;
    const text = first && "text" in first ? String(first.text) : "";
    asked.push(text);
    await Bun.sleep(200);
    return { model: name, role: "assistant", content: { type: "text", text: `${name} read: ${text}` } };
  });
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    listChanged++;
  });
  await client.connect(transport);
  scope.defer(() => client.close());
  return { client, asked, stderr: () => stderr, listChanged: () => listChanged, pid: transport.pid };
}

/** An SDK v2 client pinned to 2026-07-28 over stdio. */
async function v2Client(sandbox: Sandbox) {
  const transport = new V2StdioClientTransport({
    command: requireBinary(),
    args: serveArgs(sandbox),
    env: sandbox.env(),
    stderr: "ignore",
  });
  const client = new V2Client(
    { name: "modern", version: "1" },
    {
      capabilities: { sampling: {} },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(transport);
  scope.defer(() => client.close());
  return client;
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");
const callTool = (name: string, args: Record<string, unknown> = {}) => ({
  name: "call_tool",
  arguments: { name, arguments: args },
});

/**
 * The MCP Inspector's CLI, run as a person runs it: one method against `mcpproxy serve`. It needs
 * Node 22, so it is not a devDependency: scripts/install-inspector.sh puts both in .inspector/.
 */
const INSPECTOR_DIR = join(ROOT, ".inspector", "node_modules");
const INSPECTOR = join(
  INSPECTOR_DIR,
  "@modelcontextprotocol",
  "inspector",
  "clients",
  "launcher",
  "build",
  "index.js",
);
const NODE_22 = join(INSPECTOR_DIR, ".bin", "node");
const hasInspector = existsSync(INSPECTOR) && existsSync(NODE_22);
const INSPECTOR_MISSING =
  "the MCP Inspector is not installed (scripts/install-inspector.sh; .ci/run runs it): its CLI is not tried";
const inspect = (sandbox: Sandbox, method: string[]) =>
  runProcess(
    [NODE_22, INSPECTOR, "--cli", ...method, "--", requireBinary(), ...serveArgs(sandbox)],
    sandbox.env(),
  );

describe("mcpproxy start, status and stop", () => {
  test("start runs one service, a second start says so, status tells it, stop ends it and its servers", async () => {
    const { sandbox, cli, status, upstreams } = serviceSandbox();
    expect((await cli("status")).code).toBe(3);
    const started = await cli("start");
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/^mcpproxy started: http:\/\/127\.0\.0\.1:\d+\/mcp \(pid \d+\)/);
    const first = await eventually(status, (s) => s.servers[0]?.state === "connected", 20_000);
    expect(first).toMatchObject({ running: true, servers: [{ name: "fx", state: "connected", tools: 21 }] });
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(Date.parse(first.since ?? "")).toBeGreaterThan(Date.now() - 120_000);
    expect(upstreams()).toBe(1);
    // The token is required: another program on this machine without it is refused.
    expect((await fetch(new URL("/health", first.url ?? ""))).status).toBe(401);
    expect((readFileSync(join(sandbox.dataDir, "http-token")) && true) as boolean).toBe(true);

    const again = await cli("start");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already running: ${first.url} (pid ${first.pid}`);
    const text = await cli("status");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`is running at ${first.url}`);
    expect(text.stdout).toMatch(/fx\s+connected, 21 tools/);

    const stopped = await cli("stop");
    expect(stopped.stdout).toContain(`mcpproxy stopped (pid ${first.pid})`);
    expect(isAlive(first.pid ?? 0)).toBe(false);
    expect(await eventually(upstreams, (count) => count === 0, 10_000)).toBe(0);
    expect((await status()).running).toBe(false);
    expect((await cli("stop")).stdout).toContain("mcpproxy is not running");

    // The port is kept: the URL a client was given stays true. A log grown too large is set aside.
    const log = join(sandbox.dataDir, "service.log");
    writeFileSync(log, "x".repeat(11 * 1024 * 1024));
    await cli("start");
    expect((await status()).url).toBe(first.url);
    expect(statSync(`${log}.1`).size).toBe(11 * 1024 * 1024);
    expect(statSync(log).size).toBeLessThan(1024 * 1024);
    expect(readFileSync(log, "utf8")).toContain("serving MCP at");
  });

  test("a killed service, or a record naming a pid that is not a service, does not block the next start", async () => {
    const { sandbox, cli, status } = serviceSandbox();
    await cli("start");
    const killed = await status();
    process.kill(killed.pid ?? 0, "SIGKILL");
    await eventually(
      () => isAlive(killed.pid ?? 0),
      (alive) => !alive,
      10_000,
    );
    expect((await status()).running).toBe(false);
    const restarted = await cli("start");
    expect(restarted.stdout).toContain("mcpproxy started");
    const second = await status();
    expect(second.pid).not.toBe(killed.pid);
    expect(second.url).toBe(killed.url);
    await cli("stop");

    // A record left behind whose pid now belongs to another program (here, this test).
    writeFileSync(
      join(sandbox.dataDir, "service.json"),
      JSON.stringify({
        ...recordOf(sandbox),
        pid: process.pid,
        url: killed.url,
        since: "x",
        version: "0",
        configPath: sandbox.configPath,
        routing: "call-tool",
      }),
    );
    expect((await status()).running).toBe(false);
    expect((await cli("stop")).stdout).toContain("not running");
    expect((await cli("start")).stdout).toContain("mcpproxy started");
    expect((await status()).pid).not.toBe(process.pid);
  });
});

describe("mcpproxy alone on a terminal", () => {
  const script = Bun.which("script");
  // util-linux `script` gives the binary a terminal, as a user's shell does.
  test.skipIf(!script)(
    "says whether the service runs, and offers `mcpproxy start` while it does not",
    async () => {
      const { sandbox, cli, status } = serviceSandbox();
      const alone = async () => {
        const env = sandbox.env({
          MCPPROXY_CONFIG_PATH: sandbox.configPath,
          MCPPROXY_DATA_DIR: sandbox.dataDir,
        });
        const child = Bun.spawn([script ?? "script", "-qc", requireBinary(), "/dev/null"], {
          env,
          stdout: "pipe",
          stderr: "pipe",
        });
        const out = await new Response(child.stdout).text();
        expect(await child.exited).toBe(0);
        return out;
      };
      mkdirSync(sandbox.dataDir, { recursive: true });
      const before = await alone();
      expect(before).toContain("mcpproxy start");
      expect(before).not.toContain("The background service runs");
      await cli("start");
      const { url, pid } = await status();
      const after = await alone();
      expect(after).toContain(`The background service runs at ${url} (pid ${pid})`);
      expect(after).not.toContain("mcpproxy start ");
    },
  );
});

describe("mcpproxy service install and uninstall", () => {
  const SYSTEMD_ANALYZE = Bun.which("systemd-analyze");
  const noBus = (sandbox: Sandbox) =>
    sandbox.env({
      XDG_RUNTIME_DIR: join(sandbox.dir, "no-runtime"),
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent",
    });

  test("install writes the systemd user unit, says how to enable it where systemctl --user cannot be reached, and exits 0", async () => {
    const { sandbox } = serviceSandbox();
    // No user bus: what a container, or a login without systemd, gives.
    const env = noBus(sandbox);
    const common = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const installed = await runCli(["service", "install", ...common], env);
    expect(installed.code).toBe(0);
    const unitPath = join(sandbox.home, ".config", "systemd", "user", "mcpproxy.service");
    expect(installed.stdout).toContain(`wrote ${unitPath}`);
    expect(installed.stdout).toContain("systemctl --user enable --now mcpproxy.service");
    const unit = readFileSync(unitPath, "utf8");
    expect(unit).toContain(
      `ExecStart=${requireBinary()} service run --config ${sandbox.configPath} --data-dir ${sandbox.dataDir}`,
    );
    // The other systems' units, as text.
    const plist = await runCli(["service", "install", "--dry-run", "--platform", "macos", ...common], env);
    expect(plist.stdout).toContain("<key>ProgramArguments</key>");
    expect(plist.stdout).toContain("launchctl bootstrap");
    const task = await runCli(["service", "install", "--dry-run", "--platform", "windows", ...common], env);
    expect(task.stdout).toContain("schtasks /Create /TN mcpproxy /XML");
    const removed = await runCli(["service", "uninstall", ...common], env);
    expect(removed.stdout).toContain(`removed ${unitPath}`);
    expect((await runCli(["service", "uninstall", ...common], env)).stdout).toContain("no unit to remove");
  });

  // systemd-analyze comes with Debian's systemd package (.ci/run installs it).
  test.skipIf(!SYSTEMD_ANALYZE)(
    "systemd-analyze verify accepts the unit install writes (skipped without systemd-analyze)",
    async () => {
      const { sandbox } = serviceSandbox();
      await runCli(
        ["service", "install", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        noBus(sandbox),
      );
      const unitPath = join(sandbox.home, ".config", "systemd", "user", "mcpproxy.service");
      const verified = await runProcess([SYSTEMD_ANALYZE ?? "", "verify", "--man=no", unitPath], {
        PATH: process.env.PATH ?? "",
      });
      expect(verified.stderr).toBe("");
      expect(verified.code).toBe(0);
    },
  );
});

describe("clients that take a URL", () => {
  test("import --snippet offers the service's URL and token header; import --use-service points Cursor at it", async () => {
    const { sandbox, cli, status, echoed } = serviceSandbox();
    const env = sandbox.env({ MCPPROXY_DATA_DIR: sandbox.dataDir });
    const before = await runCli(["import", "--snippet", "--config", sandbox.configPath], env);
    expect(before.stdout).toContain("run `mcpproxy start`, then this again for its URL");
    const refused = await runCli(["import", "--use-service", "--config", sandbox.configPath], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("`mcpproxy start` first");
    await cli("start");
    const { url } = await status();
    const snippet = await runCli(["import", "--snippet", "--config", sandbox.configPath], env);
    expect(snippet.stdout).toContain(`"url": "${url}"`);
    expect(snippet.stdout).toContain('"Authorization": "Bearer <token>"');
    expect(snippet.stdout).toContain(`$(cat ${join(sandbox.dataDir, "http-token")})`);

    // Cursor lists the server mcpproxy has (the same command and arguments) and one it has not.
    const cursorFile = join(sandbox.home, ".cursor", "mcp.json");
    mkdirSync(join(sandbox.home, ".cursor"), { recursive: true });
    const served = (JSON.parse(readFileSync(sandbox.configPath, "utf8")) as { mcpServers: { fx: unknown } })
      .mcpServers.fx;
    writeFileSync(
      cursorFile,
      `{\n  // Cursor's own comment\n  "mcpServers": ${JSON.stringify({ fx: served, other: { command: "other-server" } })}\n}\n`,
      { mode: 0o644 },
    );
    const dry = await runCli(
      ["import", "--use-service", "--dry-run", "--from", "cursor", "--config", sandbox.configPath],
      env,
    );
    expect(dry.stdout).toContain("out of its list, served by mcpproxy now: fx");
    expect(dry.stdout).toContain("kept (not in mcpproxy's config; `mcpproxy import` adds them): other");
    expect(readFileSync(cursorFile, "utf8")).not.toContain("mcpproxy");
    const pointed = await runCli(
      ["import", "--use-service", "--from", "cursor", "--config", sandbox.configPath],
      env,
    );
    expect(pointed.code).toBe(0);
    const written = readFileSync(cursorFile, "utf8");
    expect(written).toContain("// Cursor's own comment");
    const token = readFileSync(join(sandbox.dataDir, "http-token"), "utf8").trim();
    const entries = (
      Bun.JSONC.parse(written) as {
        mcpServers: Record<string, { url?: string; headers?: Record<string, string> }>;
      }
    ).mcpServers;
    expect(Object.keys(entries).sort()).toEqual(["mcpproxy", "other"]);
    expect(entries.mcpproxy).toEqual({ url: url ?? "", headers: { Authorization: `Bearer ${token}` } });
    expect(statSync(cursorFile).mode & 0o777).toBe(0o600);
    expect(pointed.stdout).toMatch(/backup: ~\/\.cursor\/mcp\.json\.bak-\d+/);

    // The entry is mcpproxy itself from now on: import never makes it an upstream (the proxy would be
    // its own), and doctor counts Cursor as a client of mcpproxy.
    const again = await runCli(
      ["import", "--dry-run", "--from", "cursor", "--config", sandbox.configPath],
      env,
    );
    expect(again.stdout).toContain("skip  mcpproxy (Cursor): it is mcpproxy itself");
    const doctor = await runCli(["doctor", "--json", "--config", sandbox.configPath], env);
    const cursor = (
      JSON.parse(doctor.stdout) as { findings: { area: string; subject: string; detail: string }[] }
    ).findings.find((finding) => finding.area === "client" && finding.subject === "Cursor");
    expect(cursor?.detail).toContain("uses mcpproxy and also lists 1 server(s) of its own");

    // What Cursor will do with the entry: an HTTP session with the service, with that header.
    const client = new Client({ name: "cursor-like", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(entries.mcpproxy?.url ?? ""), {
        requestInit: { headers: entries.mcpproxy?.headers ?? {} },
      }),
    );
    scope.defer(() => client.close());
    expect(textOf(await client.callTool(callTool("fx__echo", { message: "url" })))).toBe(echoed("url"));
  });
});

describe("nothing crossed", () => {
  test("a serve that does not hold the service's token is refused, and the token file is the user's alone", async () => {
    const { sandbox, cli, status } = serviceSandbox();
    await cli("start");
    expect(statSync(join(sandbox.dataDir, "http-token")).mode & 0o777).toBe(0o600);
    // Someone who found the service's record, with a token of their own: their bridge is refused.
    const theirs = join(sandbox.dir, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    writeFileSync(join(theirs, "service.json"), readFileSync(join(sandbox.dataDir, "service.json")));
    writeFileSync(join(theirs, "http-token"), `${"f".repeat(64)}\n`, { mode: 0o600 });
    const transport = new StdioClientTransport({
      command: requireBinary(),
      args: ["serve", "--config", sandbox.configPath, "--data-dir", theirs],
      env: sandbox.env(),
      stderr: "ignore",
    });
    const client = new Client({ name: "intruder", version: "1" });
    scope.defer(() => client.close());
    const refused = await client.connect(transport).then(
      () => "connected",
      (error: Error) => error.message,
    );
    expect(refused).toContain("HTTP 401");
    expect((await status()).sessions).toBe(0);
  });
});

describe("every client attaches to the service", () => {
  test("SDK v1 and SDK v2 (2026-07-28) clients share one set of upstreams, each with its own session", async () => {
    const { sandbox, cli, status, upstreams, echoed } = serviceSandbox({ routing: "dynamic" });
    await cli("start");
    await eventually(status, (s) => s.servers[0]?.state === "connected", 20_000);
    const [one, two] = [await v1Client(sandbox, "alice"), await v1Client(sandbox, "bob")];
    const modern = await v2Client(sandbox);
    expect(modern.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(one.stderr()).toContain("attached to the mcpproxy service");

    // Each calls; the 2026 client through call_tool (its revision has no session for dynamic tools).
    expect(textOf(await one.client.callTool(callTool("fx__echo", { message: "one" })))).toBe(echoed("one"));
    expect(textOf(await modern.callTool(callTool("fx__echo", { message: "modern" })))).toBe(echoed("modern"));

    // Dynamic routing: a search registers the tools found in that session only.
    await one.client.callTool({ name: "retrieve_tools", arguments: { query: "echo back a message" } });
    await eventually(
      () => one.listChanged(),
      (count) => count > 0,
      10_000,
    );
    expect((await one.client.listTools()).tools.map((tool) => tool.name)).toContain("fx__echo");
    expect((await two.client.listTools()).tools.map((tool) => tool.name)).not.toContain("fx__echo");

    // A sampling request reaches the client whose call asked, and no other.
    const [a, b] = await Promise.all([
      one.client.callTool(
        callTool("fx__ask_model", { prompt: "alice's secret", together: 2, name_call: true }),
      ),
      two.client.callTool(
        callTool("fx__ask_model", { prompt: "bob's secret", together: 2, name_call: true }),
      ),
    ]);
    expect(textOf(a)).toContain("alice read: alice's secret");
    expect(textOf(b)).toContain("bob read: bob's secret");
    expect(one.asked).toEqual(["alice's secret"]);
    expect(two.asked).toEqual(["bob's secret"]);
    // The 2026 client is asked in an input round of its own call (its revision has no session to ask on).
    type Round = {
      resultType?: string;
      inputRequests?: Record<string, { method: string; params?: unknown }>;
      requestState?: string;
    };
    const params = callTool("fx__ask_model", { prompt: "carol's secret" });
    const send = (sent: Record<string, unknown>) =>
      modern.request(
        { method: "tools/call", params: sent } as never,
        { allowInputRequired: true } as never,
      ) as Promise<Round>;
    const round = await send(params);
    expect(round.resultType).toBe("input_required");
    const [key, question] = Object.entries(round.inputRequests ?? {})[0] ?? [];
    expect(question?.method).toBe("sampling/createMessage");
    expect(JSON.stringify(question?.params)).toContain("carol's secret");
    const answer = { model: "carol", role: "assistant", content: { type: "text", text: "carol read it" } };
    const done = await send({
      ...params,
      inputResponses: { [key ?? ""]: answer },
      requestState: round.requestState,
    });
    expect(textOf(done)).toContain("carol read it");
    expect([...one.asked, ...two.asked]).toHaveLength(2);

    // One set of upstream processes for all of them, and the service counts their sessions.
    expect(upstreams()).toBe(1);
    expect((await status()).sessions).toBe(2);
    // A client that leaves ends its own session only.
    await two.client.close();
    expect(
      await eventually(
        async () => (await status()).sessions,
        (open) => open === 1,
        10_000,
      ),
    ).toBe(1);
    expect(textOf(await one.client.callTool(callTool("fx__echo", { message: "still" })))).toBe(
      echoed("still"),
    );
  });

  test("progress and cancellation pass through a bridge, in both revisions", async () => {
    const { sandbox, cli } = serviceSandbox();
    await cli("start");
    const one = await v1Client(sandbox, "alice");
    const modern = await v2Client(sandbox);
    // Progress: the server's notices reach the client whose call it is.
    const steps: number[] = [];
    const counted = await one.client.callTool(
      callTool("fx__count_with_progress", { steps: 3, interval_ms: 20 }),
      undefined,
      {
        onprogress: (progress) => void steps.push(progress.progress),
      },
    );
    expect(textOf(counted)).toBe("counted to 3");
    // The last notice too, written just before the answer: the bridge holds an answer a moment after
    // a notice, as the stdio server does, or the client's SDK drops it (progress-gap.ts).
    expect(steps).toEqual([1, 2, 3]);
    const modernSteps: number[] = [];
    await modern.callTool(callTool("fx__count_with_progress", { steps: 3, interval_ms: 20 }), {
      onprogress: (progress) => void modernSteps.push(progress.progress),
    });
    expect(modernSteps).toEqual([1, 2, 3]);
    const cancelledSoFar = async () =>
      JSON.parse(textOf(await one.client.callTool(callTool("fx__cancelled_calls")))) as string[];
    // Cancellation: a 2025 client's notifications/cancelled, and a 2026 client's closed stream,
    // each cancel the call at the server.
    for (const [era, call] of [
      [
        "2025",
        (signal: AbortSignal) =>
          one.client.callTool(callTool("fx__sleep_then_answer", { ms: 30_000 }), undefined, { signal }),
      ],
      [
        "2026",
        (signal: AbortSignal) =>
          modern.callTool(callTool("fx__sleep_then_answer", { ms: 30_000 }), { signal }),
      ],
    ] as const) {
      const before = (await cancelledSoFar()).length;
      const controller = new AbortController();
      const pending = call(controller.signal);
      await Bun.sleep(500);
      controller.abort(`the ${era} user pressed stop`);
      await expect(pending).rejects.toThrow();
      const cancelled = await eventually(cancelledSoFar, (list) => list.length > before, 10_000);
      expect(cancelled.length, era).toBe(before + 1);
    }
  });

  test("an approval made while clients run reaches all of them at once", async () => {
    const { sandbox, cli, echoed } = serviceSandbox({ quarantineNewServers: true });
    await cli("start");
    const one = await v1Client(sandbox, "alice");
    const modern = await v2Client(sandbox);
    const held = await one.client.callTool(callTool("fx__echo", { message: "x" }));
    expect(held.isError).toBe(true);
    expect(
      (
        await runCli(
          ["approve", "fx", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
          sandbox.env(),
        )
      ).code,
    ).toBe(0);
    const echo = (client: { callTool: (params: never) => Promise<unknown> }) =>
      eventually(
        async () => textOf(await client.callTool(callTool("fx__echo", { message: "now" }) as never)),
        (text) => text === echoed("now"),
        15_000,
      );
    expect(await echo(one.client as never)).toBe(echoed("now"));
    expect(await echo(modern as never)).toBe(echoed("now"));
  });

  test.skipIf(!hasInspector)(
    `the MCP Inspector's CLI attaches beside an SDK client: held until approved, then calls and searches in a session of its own${hasInspector ? "" : ` (skipped: ${INSPECTOR_MISSING})`}`,
    async () => {
      const { sandbox, cli, echoed, upstreams } = serviceSandbox({
        routing: "dynamic",
        quarantineNewServers: true,
      });
      await cli("start");
      const one = await v1Client(sandbox, "alice");
      const call = (message: string) =>
        inspect(sandbox, [
          "--method",
          "tools/call",
          "--tool-name",
          "call_tool",
          "--tool-arg",
          "name=fx__echo",
          `arguments={"message":"${message}"}`,
        ]);
      expect((await call("held")).stdout).not.toContain(echoed("held"));
      const approved = await runCli(
        ["approve", "fx", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        sandbox.env(),
      );
      expect(approved.code).toBe(0);
      expect(
        await eventually(
          async () => (await call("now")).stdout,
          (out) => out.includes(echoed("now")),
          15_000,
        ),
      ).toContain(echoed("now"));
      expect(textOf(await one.client.callTool(callTool("fx__echo", { message: "alice" })))).toBe(
        echoed("alice"),
      );
      const found = await inspect(sandbox, [
        "--method",
        "tools/call",
        "--tool-name",
        "retrieve_tools",
        "--tool-arg",
        "query=echo back a message",
      ]);
      expect(found.stdout).toContain("fx__echo");
      // Its search registered the tools in its own session, which ended with it: not in alice's.
      expect((await one.client.listTools()).tools.map((tool) => tool.name)).not.toContain("fx__echo");
      expect(upstreams()).toBe(1);
    },
  );

  test("the service killed and started again under its clients: a call in flight fails clearly, the next ones work", async () => {
    const { sandbox, cli, status, echoed, processesOf } = serviceSandbox({ routing: "dynamic" });
    await cli("start");
    const one = await v1Client(sandbox, "alice");
    const modern = await v2Client(sandbox);
    await one.client.callTool({ name: "retrieve_tools", arguments: { query: "echo back a message" } });
    expect((await one.client.listTools()).tools.map((tool) => tool.name)).toContain("fx__echo");
    const before = one.listChanged();

    const slow = one.client.callTool(callTool("fx__sleep_then_answer", { ms: 60_000 }), undefined, {
      timeout: 90_000,
    });
    await Bun.sleep(500);
    process.kill((await status()).pid ?? 0, "SIGKILL");
    const failed = await slow.then(
      (result) => textOf(result),
      (error: Error) => error.message,
    );
    expect(failed).toContain("went away before it answered");
    // The killed service's server, still in its 60 s call, outlives it until the call ends: ended here.
    for (const pid of processesOf()) process.kill(pid, "SIGKILL");

    expect((await cli("start")).code).toBe(0);
    // The session is opened again and its search asked again: the client is told, and its tools are back.
    await eventually(
      () => one.listChanged(),
      (count) => count > before,
      30_000,
    );
    expect((await one.client.listTools()).tools.map((tool) => tool.name)).toContain("fx__echo");
    expect(textOf(await one.client.callTool({ name: "fx__echo", arguments: { message: "back" } }))).toBe(
      echoed("back"),
    );
    expect(textOf(await modern.callTool(callTool("fx__echo", { message: "back" })))).toBe(echoed("back"));
  });

  test("a 2026-07-28 client's listen stream outlives a restart of the service (killed, or stopped): it is opened again and still hears", async () => {
    const { sandbox, cli, status, processesOf } = serviceSandbox();
    await cli("start");
    let heard = 0;
    const modern = new V2Client(
      { name: "listener", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    modern.setNotificationHandler("notifications/prompts/list_changed", () => {
      heard++;
    });
    await modern.connect(
      new V2StdioClientTransport({
        command: requireBinary(),
        args: serveArgs(sandbox),
        env: sandbox.env(),
        stderr: "ignore",
      }),
    );
    scope.defer(() => modern.close());
    await modern.listen({ promptsListChanged: true });
    const addServer = (name: string) => {
      const config = JSON.parse(readFileSync(sandbox.configPath, "utf8"));
      config.mcpServers[name] = fixtureEntry({ args: ["--relay-tools", "--name", `${name}-extra`] });
      writeFileSync(sandbox.configPath, JSON.stringify(config, null, 2));
    };
    addServer("before");
    await eventually(
      () => heard,
      (count) => count > 0,
      20_000,
    );
    const before = heard;
    process.kill((await status()).pid ?? 0, "SIGKILL");
    for (const pid of processesOf()) process.kill(pid, "SIGKILL");
    expect((await cli("start")).code).toBe(0);
    await Bun.sleep(1_500);
    addServer("after");
    expect(
      await eventually(
        () => heard,
        (count) => count > before,
        20_000,
      ),
    ).toBeGreaterThan(before);
    // A clean stop ends every listen stream; the bridge keeps the client's and opens it again on the next start.
    const afterKill = heard;
    expect((await cli("stop")).code).toBe(0);
    expect((await cli("start")).code).toBe(0);
    await Bun.sleep(1_500);
    addServer("later");
    expect(
      await eventually(
        () => heard,
        (count) => count > afterKill,
        20_000,
      ),
    ).toBeGreaterThan(afterKill);
  });

  test("with autoStart, a serve that finds no service starts one and attaches to it", async () => {
    const { sandbox, status, echoed, upstreams } = serviceSandbox({ autoStart: true });
    const one = await v1Client(sandbox, "first");
    expect(one.stderr()).toContain("started the mcpproxy service (autoStart)");
    expect(textOf(await one.client.callTool(callTool("fx__echo", { message: "auto" })))).toBe(echoed("auto"));
    const second = await v1Client(sandbox, "second");
    expect(second.stderr()).not.toContain("autoStart");
    expect(second.stderr()).toContain("attached to the mcpproxy service");
    expect((await status()).running).toBe(true);
    expect(upstreams()).toBe(1);
  });

  test("--standalone serves on its own, and so does serve when no service runs", async () => {
    const { sandbox, cli, upstreams, echoed } = serviceSandbox();
    const alone = await v1Client(sandbox, "alone");
    expect(textOf(await alone.client.callTool(callTool("fx__echo", { message: "alone" })))).toBe(
      echoed("alone"),
    );
    expect(alone.stderr()).not.toContain("attached");
    await alone.client.close();
    await cli("start");
    const forced = await v1Client(sandbox, "forced", ["--standalone"]);
    expect(textOf(await forced.client.callTool(callTool("fx__echo", { message: "forced" })))).toBe(
      echoed("forced"),
    );
    expect(forced.stderr()).not.toContain("attached");
    // Its own copy of the server, beside the service's.
    expect(upstreams()).toBe(2);
  });
});
