import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  eventually,
  fixtureEntry,
  runCli,
  type Sandbox,
  type ServerHealth,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(90_000);

/**
 * Self-healing calls (issue 24 part 4) through the compiled binary, with fixture servers whose
 * tools are read from files and fail on demand (FIXTURE_FAIL_TOOLS) and that log every call
 * (FIXTURE_CALL_LOG): `get_tool_alternatives`, `autoRetryFallback` (off by default; read-only to
 * read-only, arguments that fit, once, never for a cancelled call, never into an agent's server
 * unless a person says so), `retrieve_tools {include_metrics}`, and `preconnect` under a lazy
 * default.
 */
const scope = cleanupAfterEach();

type Proxy = Awaited<ReturnType<typeof connectStdio>>;
type Result = ReturnType<typeof CallToolResultSchema.parse>;

const readOnly = { readOnlyHint: true };
const query = { type: "object", properties: { query: { type: "string" }, wait_ms: { type: "number" } } };
const tool = (name: string, description: string, inputSchema: object, annotations?: object) => ({
  name,
  description,
  inputSchema,
  ...(annotations ? { annotations } : {}),
});
const SEARCH = "Search the notes for a text and return the notes that contain it";

/** The tools of the server whose calls fail, and of its look-alike on another server. */
const PRIMARY = [
  tool("search_notes", SEARCH, { ...query, required: ["query"] }, readOnly),
  tool(
    "search_note_titles",
    "Search the titles of the notes for a text and return the notes whose title contains it",
    { ...query, required: ["query"] },
    readOnly,
  ),
  tool(
    "archive_notes",
    "Archive the notes that contain a text",
    { ...query, required: ["query"] },
    {
      destructiveHint: true,
    },
  ),
  tool(
    "export_notes",
    "Export the notes that contain a text as markdown",
    { ...query, required: ["query"] },
    readOnly,
  ),
  tool(
    "lookup_note",
    "Look up one note by its id",
    { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    readOnly,
  ),
];
const strict = (schema: object) => ({ ...schema, additionalProperties: false });
const MIRROR = [
  tool("search_notes", SEARCH, strict({ ...query, required: ["query"] }), readOnly),
  // Read-only here, but the failing one is not: no retry either way round.
  tool("archive_notes", "Archive the notes that contain a text", { ...query, required: ["query"] }, readOnly),
  tool("export_notes", "Export the notes that contain a text as markdown", { ...query, required: ["query"] }),
  tool(
    "lookup_note",
    "Look up one note by its id",
    strict({ type: "object", properties: { id: { type: "integer" } }, required: ["id"] }),
    readOnly,
  ),
];
const FAILING = "search_notes,archive_notes,export_notes,lookup_note";
/** A weaker look-alike on a third server, for what comes after the first alternative. */
const THIRD = tool(
  "search_notes",
  "Search notes for a text",
  strict({ ...query, required: ["query"] }),
  readOnly,
);

/** A fixture server listing `tools`, failing `failing`, logging its calls to <dir>/<name>.calls. */
function notesServer(sandbox: Sandbox, name: string, tools: object[], failing = "") {
  const file = join(sandbox.dir, `${name}.tools.json`);
  writeFileSync(file, JSON.stringify(tools));
  return fixtureEntry({
    args: ["--name", name, "--tools-file", file],
    env: { FIXTURE_CALL_LOG: join(sandbox.dir, `${name}.calls`), FIXTURE_FAIL_TOOLS: failing },
  });
}

/** The calls a server received, as `TOOL ARGS` lines. */
function callsOf(sandbox: Sandbox, name: string): string[] {
  const log = join(sandbox.dir, `${name}.calls`);
  return existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : [];
}

const flags = (sandbox: Sandbox) => ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];

/** A stdio proxy on the config `configFor` writes (its servers log into the sandbox). */
async function proxyWith(configFor: (sandbox: Sandbox) => unknown, env: Record<string, string> = {}) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig(configFor(sandbox));
  const proxy = await connectStdio(sandbox, env);
  scope.defer(() => proxy.close());
  return { sandbox, proxy };
}

async function call(proxy: Proxy, name: string, args: Record<string, unknown>): Promise<Result> {
  return CallToolResultSchema.parse(
    await proxy.client.callTool({ name: "call_tool", arguments: { name, arguments: args } }),
  );
}

/** The names in a result's `_meta["mcpproxy/alternatives"]` (none when it has none). */
const alternativeNames = (result: Result) =>
  ((result._meta?.["mcpproxy/alternatives"] ?? []) as { name: string }[]).map((a) => a.name);

const texts = (result: Result) => result.content.map((part) => ("text" in part ? String(part.text) : ""));

interface Alternatives {
  name: string;
  serverState: string;
  alternatives: { name: string; server: string; why: string; inputSchema: object }[];
  hint?: string;
}

async function alternativesOf(proxy: Proxy, name: string) {
  const result = CallToolResultSchema.parse(
    await proxy.client.callTool({ name: "get_tool_alternatives", arguments: { name } }),
  );
  return { result, found: result.structuredContent as unknown as Alternatives };
}

/** primary's tools fail; mirror has look-alikes; held's identical tool waits for approval. */
const retryConfig =
  (mcpproxy: Record<string, unknown>, mirrorFails = "") =>
  (sandbox: Sandbox) => ({
    mcpServers: {
      primary: notesServer(sandbox, "primary", PRIMARY, FAILING),
      mirror: notesServer(sandbox, "mirror", MIRROR, mirrorFails),
      held: { ...notesServer(sandbox, "held", [MIRROR[0]!]), quarantined: true },
      third: notesServer(sandbox, "third", [THIRD]),
    },
    mcpproxy,
  });

describe("get_tool_alternatives", () => {
  test("is listed beside the proxy's own tools, never offers a quarantined tool, and an unknown name points to retrieve_tools", async () => {
    const { sandbox, proxy } = await proxyWith(retryConfig({}));
    const names = (await proxy.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("get_tool_alternatives");
    const { found } = await alternativesOf(proxy, "primary__search_notes");
    const offered = found.alternatives.map((a) => a.name);
    expect(offered[0]).toBe("mirror__search_notes");
    // held lists the very same tool, but a person has not approved it.
    expect(offered).not.toContain("held__search_notes");
    const { result } = await alternativesOf(proxy, "nobody__nothing");
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toBe(
      "No tool named nobody__nothing. Use retrieve_tools to find tools and pass the name it returns.",
    );
    // Under --passthrough the client sees one server's own tools, and nothing else.
    const passthrough = await connectStdio(sandbox, {}, ["--passthrough", "mirror"]);
    scope.defer(() => passthrough.close());
    const own = (await passthrough.client.listTools()).tools.map((t) => t.name);
    expect(own.sort()).toEqual(["archive_notes", "export_notes", "lookup_note", "search_notes"]);
  });

  test("ranks the tool's own server's look-alike first while it is up, other servers first once it is down", async () => {
    const sandbox = scope.sandbox();
    const up = {
      primary: notesServer(sandbox, "primary", PRIMARY),
      other: notesServer(sandbox, "other", [
        tool("query_notes", "Search notes and return those containing a text", query, readOnly),
      ]),
    };
    sandbox.writeConfig({ mcpServers: up });
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);
    let proxy = await connectStdio(sandbox);
    const ranked = async () => {
      const { found } = await alternativesOf(proxy, "primary__search_notes");
      return found;
    };
    try {
      const whileUp = await eventually(ranked, (found) => found.serverState === "connected", 20_000);
      expect(whileUp.alternatives.map((a) => a.name).slice(0, 2)).toEqual([
        "primary__search_note_titles",
        "other__query_notes",
      ]);
      expect(whileUp.alternatives[0]!.why).toContain("similar to primary__search_notes");
      expect(whileUp.alternatives[1]!.inputSchema).toMatchObject({
        properties: { query: { type: "string" } },
      });
    } finally {
      await proxy.close();
    }

    // The same server now dies at start: its tools stay indexed, and no longer come first.
    const broken = { ...up.primary, args: [...up.primary.args, "--mode", "exit-on-init"] };
    sandbox.writeConfig({ mcpServers: { ...up, primary: broken } });
    proxy = await connectStdio(sandbox);
    try {
      const whileDown = await eventually(
        ranked,
        (found) => !["connecting", "connected", "configured"].includes(found.serverState),
        20_000,
      );
      expect(whileDown.alternatives[0]?.name).toBe("other__query_notes");
      expect(whileDown.alternatives[0]!.why).toContain("while primary is down");
      expect(whileDown.alternatives.map((a) => a.server)).not.toContain("primary");
    } finally {
      await proxy.close();
    }
  });
});

describe("an alternative is never more dangerous than the failed tool (issue 34, item 12)", () => {
  const FS = [
    tool(
      "read_text_file",
      "Read the complete contents of a text file from the file system",
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      readOnly,
    ),
    // As @modelcontextprotocol/server-filesystem annotates it: writes, but says it destroys nothing.
    tool(
      "move_file",
      "Move or rename a text file in the file system: read the file and write it to a new path",
      {
        type: "object",
        properties: { path: { type: "string" }, destination: { type: "string" } },
        required: ["path"],
      },
      { readOnlyHint: false, destructiveHint: false },
    ),
    tool(
      "write_file",
      "Write the complete contents of a text file in the file system, replacing what it held",
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    ),
    tool(
      "append_to_file",
      "Append text to the contents of a text file in the file system",
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      { readOnlyHint: false, destructiveHint: false },
    ),
    tool(
      "append_to_files",
      "Append text to the contents of several text files in the file system",
      { type: "object", properties: { paths: { type: "array" } }, required: ["paths"] },
      { readOnlyHint: false, destructiveHint: false },
    ),
    tool(
      "truncate_and_append_to_file",
      "Empty a text file in the file system, then append text to its contents",
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      { destructiveHint: true },
    ),
  ];
  const BACKUP = [
    tool(
      "read_file",
      "Read the complete contents of a file from the file system backup",
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      readOnly,
    ),
  ];
  const fsConfig = (sandbox: Sandbox) => ({
    mcpServers: {
      filesystem: notesServer(sandbox, "filesystem", FS, "read_text_file,append_to_file"),
      backup: notesServer(sandbox, "backup", BACKUP, "read_file"),
    },
    mcpproxy: { autoRetryFallback: true },
  });

  test("a failed read is offered reads only, in its result and by get_tool_alternatives; a fallback goes to a read", async () => {
    const { sandbox, proxy } = await proxyWith(fsConfig);
    // Each of them matches a read of a text file: only the rule keeps the writing ones out.
    const found = (await proxy.client.callTool({
      name: "retrieve_tools",
      arguments: { query: "read the complete contents of a text file", top_k: 10 },
    })) as Result;
    const matched = ((found.structuredContent as { tools: { name: string }[] }).tools ?? []).map(
      (t) => t.name,
    );
    expect(matched).toEqual(expect.arrayContaining(["filesystem__move_file", "filesystem__write_file"]));

    const failed = await call(proxy, "filesystem__read_text_file", { path: "/etc/hostname" });
    expect(failed.isError).toBe(true);
    // The retry went to the read-only look-alike, which failed too: the rest are named.
    expect(failed._meta?.["mcpproxy/fallback"]).toMatchObject({ to: "backup__read_file" });
    expect(callsOf(sandbox, "backup")).toEqual(['read_file {"path":"/etc/hostname"}']);
    const { found: offered } = await alternativesOf(proxy, "filesystem__read_text_file");
    const names = offered.alternatives.map((a) => a.name);
    expect(names).toEqual(["backup__read_file"]);
    for (const listed of [alternativeNames(failed), names]) {
      expect(listed).not.toContain("filesystem__move_file");
      expect(listed).not.toContain("filesystem__write_file");
      expect(listed).not.toContain("filesystem__append_to_file");
    }
    expect(texts(failed).join("\n")).not.toContain("move_file");
    expect(callsOf(sandbox, "filesystem")).toEqual(['read_text_file {"path":"/etc/hostname"}']);
  });

  test("a failed tool that adds but never destroys is offered reads and other such tools, never one that may destroy", async () => {
    const { proxy } = await proxyWith(fsConfig);
    const { found } = await alternativesOf(proxy, "filesystem__append_to_file");
    const names = found.alternatives.map((a) => a.name);
    expect(names).toEqual(["filesystem__append_to_files"]);
    const failed = await call(proxy, "filesystem__append_to_file", { path: "/tmp/x" });
    expect(alternativeNames(failed)).toEqual(["filesystem__append_to_files"]);
    // Not read-only: never retried, whatever it is offered.
    expect(failed._meta).not.toHaveProperty("mcpproxy/fallback");
  });
});

describe("autoRetryFallback", () => {
  test("off (the default): a failed call is not retried, only its alternatives are named", async () => {
    const { sandbox, proxy } = await proxyWith(retryConfig({}));
    const failed = await call(proxy, "primary__search_notes", { query: "milk" });
    expect(failed.isError).toBe(true);
    expect(texts(failed)[0]).toBe("primary: search_notes is broken");
    const named = alternativeNames(failed);
    expect(named[0]).toBe("mirror__search_notes");
    expect(named).not.toContain("held__search_notes");
    expect(failed._meta).not.toHaveProperty("mcpproxy/fallback");
    expect(callsOf(sandbox, "primary")).toEqual(['search_notes {"query":"milk"}']);
    expect(callsOf(sandbox, "mirror")).toEqual([]);
  });

  test("on: a failed read-only call is retried once on the first read-only alternative whose schema fits; both are labelled and counted", async () => {
    const { sandbox, proxy } = await proxyWith(retryConfig({ autoRetryFallback: true }));
    const result = await call(proxy, "primary__search_notes", { query: "milk" });
    expect(result.isError).toBeFalsy();
    const [label, original, second, fallback] = texts(result);
    expect(label).toContain("primary__search_notes failed");
    expect(label).toContain("mirror__search_notes");
    expect(original).toBe("primary: search_notes is broken");
    expect(second).toBe(
      "[mcpproxy] Result of mirror__search_notes, called in place of primary__search_notes:",
    );
    expect(fallback).toBe('ran search_notes with {"query":"milk"}');
    expect(result._meta?.["mcpproxy/fallback"]).toEqual({
      from: "primary__search_notes",
      to: "mirror__search_notes",
      originalError: "primary: search_notes is broken",
    });
    expect(callsOf(sandbox, "primary")).toEqual(['search_notes {"query":"milk"}']);
    expect(callsOf(sandbox, "mirror")).toEqual(['search_notes {"query":"milk"}']);
    // Never a quarantined tool.
    expect(callsOf(sandbox, "held")).toEqual([]);

    // Both calls are real forwarded calls: counted, one failure and one success.
    const stat = (await proxy.client.callTool({ name: "tools_stat", arguments: {} })).structuredContent as {
      top: { server: string; tool: string; calls: number; successes: number }[];
    };
    const of = (server: string) => stat.top.find((t) => t.server === server && t.tool === "search_notes");
    expect(of("primary")).toMatchObject({ calls: 1, successes: 0 });
    expect(of("mirror")).toMatchObject({ calls: 1, successes: 1 });

    // include_metrics shows the same figures; a tool never called shows calls 0.
    const search = async (extra: Record<string, unknown>) =>
      (
        await proxy.client.callTool({
          name: "retrieve_tools",
          arguments: { query: "search the notes for a text", top_k: 5, ...extra },
        })
      ).structuredContent as {
        tools: { name: string; metrics?: { calls: number; successRate?: number; p50Ms?: number } }[];
      };
    expect((await search({})).tools.every((hit) => hit.metrics === undefined)).toBe(true);
    const figures = Object.fromEntries(
      (await search({ include_metrics: true })).tools.map((hit) => [hit.name, hit.metrics]),
    );
    expect(figures.primary__search_notes).toMatchObject({ calls: 1, successRate: 0 });
    expect(figures.mirror__search_notes).toMatchObject({ calls: 1, successRate: 1 });
    expect(figures.mirror__search_notes!.p50Ms).toBeGreaterThan(0);
    expect(figures.primary__search_note_titles).toEqual({ calls: 0 });
  });

  test("one retry at most: when the fallback fails too, nothing else is tried and the rest are named", async () => {
    const { sandbox, proxy } = await proxyWith(retryConfig({ autoRetryFallback: true }, "search_notes"));
    const result = await call(proxy, "primary__search_notes", { query: "milk" });
    expect(result.isError).toBe(true);
    expect(texts(result)).toContain("mirror: search_notes is broken");
    expect(texts(result).join("\n")).toContain("(it failed too)");
    expect(result._meta?.["mcpproxy/fallback"]).toMatchObject({ to: "mirror__search_notes" });
    const rest = alternativeNames(result);
    expect(rest).not.toContain("mirror__search_notes");
    expect(rest).toContain("third__search_notes");
    expect(callsOf(sandbox, "mirror")).toHaveLength(1);
    expect(callsOf(sandbox, "third")).toEqual([]);
    expect(callsOf(sandbox, "primary")).toEqual(['search_notes {"query":"milk"}']);
  });

  test("not retried when either tool is not read-only, or when the arguments do not fit the alternative", async () => {
    const { sandbox, proxy } = await proxyWith(retryConfig({ autoRetryFallback: true }));
    // The failed tool is destructive (its look-alike is read-only).
    const archived = await call(proxy, "primary__archive_notes", { query: "milk" });
    // The failed tool is read-only, its look-alike is not.
    const exported = await call(proxy, "primary__export_notes", { query: "milk" });
    // Both read-only, but the look-alike takes an integer id.
    const looked = await call(proxy, "primary__lookup_note", { id: "n1" });
    for (const result of [archived, exported, looked]) {
      expect(result.isError).toBe(true);
      expect(result._meta).not.toHaveProperty("mcpproxy/fallback");
    }
    const named = alternativeNames;
    // These look-alikes were candidates, so only the rule kept them from being called.
    expect(named(archived)).toContain("mirror__archive_notes");
    // A look-alike that may write is not even offered for a read-only tool (issue 34, item 12).
    expect(named(exported)).not.toContain("mirror__export_notes");
    expect(named(looked)).toContain("mirror__lookup_note");
    expect(callsOf(sandbox, "primary")).toHaveLength(3);
    expect(callsOf(sandbox, "mirror")).toEqual([]);
  });

  test("not retried for a call the client cancelled", async () => {
    const { sandbox, proxy } = await proxyWith(retryConfig({ autoRetryFallback: true }));
    const controller = new AbortController();
    const pending = proxy.client.callTool(
      {
        name: "call_tool",
        arguments: { name: "primary__search_notes", arguments: { query: "m", wait_ms: 60_000 } },
      },
      undefined,
      { signal: controller.signal },
    );
    await eventually(
      () => callsOf(sandbox, "primary").length,
      (n) => n === 1,
      20_000,
    );
    controller.abort();
    await expect(pending).rejects.toThrow();
    // The server answers the cancelled call with its failure; the proxy must not act on it. A
    // later call through the same proxy is answered after that answer was read.
    await Bun.sleep(500);
    expect((await call(proxy, "third__search_notes", { query: "after" })).isError).toBeFalsy();
    expect(callsOf(sandbox, "mirror")).toEqual([]);
    // Not even attempted: a retry would carry the cancelled signal, fail before the server, and be counted.
    const stat = (await proxy.client.callTool({ name: "tools_stat", arguments: {} })).structuredContent as {
      top: { server: string }[];
    };
    expect(stat.top.map((t) => t.server).sort()).toEqual(["primary", "third"]);
  });

  test("an agent cannot set it: add and update with autoRetryFallback are refused and the file is left alone", async () => {
    const { sandbox, proxy } = await proxyWith(retryConfig({}));
    const before = readFileSync(sandbox.configPath, "utf8");
    const servers = (operation: string, extra: Record<string, unknown>) =>
      proxy.client.callTool(
        { name: "upstream_servers", arguments: { operation, ...extra } },
        CallToolResultSchema,
      );
    for (const value of [true, false]) {
      const added = await servers("add", {
        name: "sneaky",
        server: { ...fixtureEntry(), autoRetryFallback: value },
      });
      expect(added.isError).toBe(true);
      expect(texts(added as Result)[0]).toContain("autoRetryFallback: this key is not for an agent to set");
      const updated = await servers("update", { name: "primary", server: { autoRetryFallback: value } });
      expect(updated.isError).toBe(true);
      expect(texts(updated as Result)[0]).toContain("autoRetryFallback");
    }
    expect(readFileSync(sandbox.configPath, "utf8")).toBe(before);
  });

  test("the proxy-wide setting does not reach a server an agent added, even approved; the person's own setting on it does", async () => {
    const { sandbox, proxy } = await proxyWith((s: Sandbox) => ({
      mcpServers: { primary: notesServer(s, "primary", [PRIMARY[0]!], FAILING) },
      mcpproxy: { autoRetryFallback: true },
    }));
    const agentEntry = notesServer(sandbox, "agent", [MIRROR[0]!]);
    const added = await proxy.client.callTool({
      name: "upstream_servers",
      arguments: { operation: "add", name: "agent", server: agentEntry },
    });
    expect(added.isError).toBeFalsy();
    // The person approves what it runs, then its tools; until then they are never offered.
    expect((await runCli(["approve", "agent", ...flags(sandbox)], sandbox.env())).code).toBe(0);
    const unapproved = (await alternativesOf(proxy, "primary__search_notes")).found.alternatives;
    expect(unapproved.map((a) => a.server)).not.toContain("agent");
    await eventually(
      async () => (await runCli(["approve", ...flags(sandbox)], sandbox.env())).stdout,
      (out) => out.includes("agent/search_notes"),
      20_000,
    );
    expect((await runCli(["approve", "agent", ...flags(sandbox)], sandbox.env())).code).toBe(0);
    const offered = await eventually(
      async () =>
        (await alternativesOf(proxy, "primary__search_notes")).found.alternatives.map((a) => a.name),
      (names) => names.includes("agent__search_notes"),
      20_000,
    );
    expect(offered).toContain("agent__search_notes");

    const failed = await call(proxy, "primary__search_notes", { query: "milk" });
    expect(failed.isError).toBe(true);
    expect(failed._meta).not.toHaveProperty("mcpproxy/fallback");
    expect(callsOf(sandbox, "agent")).toEqual([]);

    // The person turns it on for that server by hand: now it is a fallback.
    const config = JSON.parse(readFileSync(sandbox.configPath, "utf8"));
    config.mcpServers.agent.autoRetryFallback = true;
    writeFileSync(sandbox.configPath, JSON.stringify(config, null, 2));
    const retried = await eventually(
      async () => call(proxy, "primary__search_notes", { query: "milk" }),
      (result) => result._meta?.["mcpproxy/fallback"] !== undefined,
      20_000,
    );
    expect(retried.isError).toBeFalsy();
    expect(retried._meta?.["mcpproxy/fallback"]).toMatchObject({ to: "agent__search_notes" });
    expect(callsOf(sandbox, "agent")).toEqual(['search_notes {"query":"milk"}']);
  });
});

describe("include_metrics", () => {
  test("with call statistics off, no figures and a note that says why", async () => {
    const { proxy } = await proxyWith(retryConfig({}), { MCPPROXY_STATS: "0" });
    const answer = (
      await proxy.client.callTool({
        name: "retrieve_tools",
        arguments: { query: "search the notes for a text", include_metrics: true },
      })
    ).structuredContent as { tools: { metrics?: unknown }[]; notes?: string[] };
    expect(answer.tools.length).toBeGreaterThan(0);
    expect(answer.tools.every((hit) => hit.metrics === undefined)).toBe(true);
    expect(answer.notes?.join(" ")).toContain("call statistics are off");
  });
});

describe("preconnect under a lazy default", () => {
  const started = (sandbox: Sandbox, name: string) => {
    const log = join(sandbox.dir, `${name}.starts`);
    return existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").length : 0;
  };
  const server = (sandbox: Sandbox, name: string, extra: Record<string, unknown> = {}) => ({
    ...fixtureEntry({
      args: ["--name", name],
      env: { FIXTURE_START_LOG: join(sandbox.dir, `${name}.starts`) },
    }),
    ...extra,
  });

  test("only the named servers (and those that say lazy: false) start with serve; the others on their first call", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        named: server(sandbox, "named"),
        idle: server(sandbox, "idle"),
        eager: server(sandbox, "eager", { lazy: false }),
        namedLazy: server(sandbox, "namedLazy", { lazy: true }),
      },
      mcpproxy: { lazy: true, preconnect: ["named", "namedLazy"] },
    });
    // Indexed once, so lazy servers are known without being started.
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);
    for (const name of ["named", "idle", "eager", "namedLazy"]) rmSync(join(sandbox.dir, `${name}.starts`));

    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const health = async () => {
      const response = await fetch(new URL("/health", proxy.url));
      const body = (await response.json()) as { status: string; servers: ServerHealth[] };
      return { code: response.status, status: body.status, states: stateOf(body.servers) };
    };
    const stateOf = (servers: ServerHealth[]) => Object.fromEntries(servers.map((s) => [s.name, s.state]));
    const settled = await eventually(health, (h) => h.status === "ok", 20_000);
    expect(settled).toEqual({
      code: 200,
      status: "ok",
      states: { eager: "connected", idle: "configured", named: "connected", namedLazy: "connected" },
    });
    expect(started(sandbox, "idle")).toBe(0);
    expect(started(sandbox, "named")).toBe(1);

    const client = await connectHttp(proxy.url);
    scope.defer(() => client.close());
    const listed = (await client.callTool({ name: "upstream_servers", arguments: { operation: "list" } }))
      .structuredContent as { servers: { name: string; state: string }[] };
    expect(stateOf(listed.servers as ServerHealth[]).idle).toBe("configured");
    const echoed = await client.callTool({
      name: "call_tool",
      arguments: { name: "idle__echo", arguments: { message: "wake up" } },
    });
    expect(texts(CallToolResultSchema.parse(echoed))).toEqual(["idle echo: wake up"]);
    expect(started(sandbox, "idle")).toBe(1);
    expect((await health()).states.idle).toBe("connected");

    const doctor = await runCli(["doctor", ...flags(sandbox)], sandbox.env());
    expect(doctor.stdout).toMatch(/idle[^\n]*lazy: serve starts it on the first call/);
    expect(doctor.stdout).not.toMatch(/eager[^\n]*lazy:/);
  });

  test("a lazy server the index knows no tool of is started once, so its tools can be found", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fresh: server(sandbox, "fresh") }, mcpproxy: { lazy: true } });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const found = await eventually(
      async () =>
        (
          (
            await proxy.client.callTool({
              name: "retrieve_tools",
              arguments: { query: "echo back the message" },
            })
          ).structuredContent as { tools: { name: string }[] }
        ).tools.map((hit) => hit.name),
      (names) => names.includes("fresh__echo"),
      20_000,
    );
    expect(found).toContain("fresh__echo");
    expect(started(sandbox, "fresh")).toBe(1);
  });

  test("a preconnect name that is no server is a config error naming it and the closest server", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { github: server(sandbox, "github") },
      mcpproxy: { lazy: true, preconnect: ["gihtub"] },
    });
    const run = await runCli(["servers", "list", ...flags(sandbox)], sandbox.env());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'mcpproxy.preconnect.0: no server is named "gihtub" (did you mean "github"?)',
    );
  });
});
