import { describe, expect, test } from "bun:test";
import type { Logger } from "../log.ts";
import type { Plugin, ToolCall, ToolResult } from "../plugin-api.ts";
import type { LoadedPlugin } from "./load-plugins.ts";
import { createPluginRunner, FAILURES_BEFORE_SWITCH_OFF } from "./plugin-runner.ts";

/** A logger that keeps its lines, to check what a failure says. */
function recordingLogger(lines: string[] = [], scope = ""): Logger & { lines: string[] } {
  const at = (level: string) => (message: string) => void lines.push(`${level} [${scope}] ${message}`);
  return {
    lines,
    error: at("error"),
    warn: at("warn"),
    info: at("info"),
    debug: at("debug"),
    child: (child) => recordingLogger(lines, scope ? `${scope}:${child}` : child),
    enabled: () => true,
  };
}

const loaded = (...plugins: Plugin[]): LoadedPlugin[] =>
  plugins.map((plugin) => ({ plugin, options: undefined, source: "test" }));

function runner(plugins: Plugin[], options: { strict?: boolean; timeoutMs?: number; logger?: Logger } = {}) {
  return createPluginRunner({
    plugins: loaded(...plugins),
    logger: options.logger ?? recordingLogger(),
    timeoutMs: options.timeoutMs ?? 200,
    strict: options.strict ?? false,
    dataDir: "/tmp",
  });
}

const call: ToolCall = {
  server: "fs",
  tool: "write",
  name: "fs__write",
  arguments: { path: "/a" },
  annotations: {},
};
const result: ToolResult = { content: [{ type: "text", text: "ok" }] };

describe("transform hooks", () => {
  test("run in order, pre first and post last, each receiving what the previous returned", async () => {
    const order: string[] = [];
    const tag = (name: string, extra: Partial<Plugin> = {}): Plugin => ({
      name,
      ...extra,
      transformToolResult({ result }) {
        order.push(name);
        return { ...result, content: [{ type: "text", text: `${result.content[0]?.text}>${name}` }] };
      },
    });
    const plugins = runner([
      tag("late", { order: "post" }),
      tag("a"),
      tag("early", { order: "pre" }),
      tag("b"),
    ]);
    expect(plugins.names).toEqual(["early", "a", "b", "late"]);
    const out = await plugins.transformToolResult({ ...call, result });
    expect(out.content[0]?.text).toBe("ok>early>a>b>late");
    expect(order).toEqual(["early", "a", "b", "late"]);
  });

  test("returning nothing keeps the value, and inputs cannot be changed in place", async () => {
    let mutated = false;
    const plugins = runner([
      {
        name: "mutator",
        beforeToolCall(input) {
          try {
            (input.arguments as Record<string, unknown>).path = "/etc/passwd";
            mutated = true;
          } catch {}
        },
      },
      {
        name: "replacer",
        beforeToolCall: (input) => ({ arguments: { ...input.arguments, mode: "dry-run" } }),
      },
      { name: "silent", beforeToolCall: () => undefined },
    ]);
    const decision = await plugins.beforeToolCall(call);
    expect(mutated).toBe(false);
    expect(decision).toEqual({ call: { ...call, arguments: { path: "/a", mode: "dry-run" } } });
    expect(call.arguments).toEqual({ path: "/a" });
  });

  test("a reject stops the call and names the plugin", async () => {
    const after: string[] = [];
    const plugins = runner([
      { name: "guard", beforeToolCall: () => ({ reject: "not today" }) },
      { name: "later", beforeToolCall: () => void after.push("ran") },
    ]);
    expect(await plugins.beforeToolCall(call)).toEqual({ reject: "not today", plugin: "guard" });
    expect(after).toEqual([]);
  });

  test("a hook that throws, hangs or returns nonsense keeps the previous value and is logged with plugin and hook", async () => {
    const logger = recordingLogger();
    const plugins = runner(
      [
        {
          name: "thrower",
          transformToolResult: () => {
            throw new Error("boom");
          },
        },
        { name: "hanger", transformToolResult: () => new Promise(() => {}) },
        { name: "liar", transformToolResult: () => ({ nope: true }) as unknown as ToolResult },
        { name: "fine", transformToolResult: ({ result }) => ({ ...result, isError: false }) },
      ],
      { logger, timeoutMs: 100 },
    );
    const out = await plugins.transformToolResult({ ...call, result });
    expect(out).toEqual({ ...result, isError: false });
    const log = logger.lines.join("");
    expect(log).toContain("plugin thrower: transformToolResult failed: boom; kept the previous value");
    expect(log).toContain("plugin hanger: transformToolResult failed: did not finish within 100 ms");
    expect(log).toContain(
      "plugin liar: transformToolResult failed: returned something that is not a tool result",
    );
  });

  test(`a plugin that fails ${FAILURES_BEFORE_SWITCH_OFF} times in a row is switched off with one warning`, async () => {
    const logger = recordingLogger();
    let calls = 0;
    const plugins = runner(
      [
        {
          name: "flaky",
          rankResults: () => {
            calls++;
            throw new Error("nope");
          },
        },
      ],
      { logger },
    );
    for (let i = 0; i < FAILURES_BEFORE_SWITCH_OFF + 3; i++)
      await plugins.rankResults({ query: "q", hits: [] });
    expect(calls).toBe(FAILURES_BEFORE_SWITCH_OFF);
    expect(logger.lines.filter((line) => line.includes("switched off"))).toHaveLength(1);
  });

  test("a success in between resets the count", async () => {
    let calls = 0;
    const plugins = runner([
      {
        name: "sometimes",
        rankResults: () => {
          calls++;
          if (calls % FAILURES_BEFORE_SWITCH_OFF === 0) return undefined;
          throw new Error("nope");
        },
      },
    ]);
    for (let i = 0; i < FAILURES_BEFORE_SWITCH_OFF * 3; i++)
      await plugins.rankResults({ query: "q", hits: [] });
    expect(calls).toBe(FAILURES_BEFORE_SWITCH_OFF * 3);
  });

  test("with strict, a failure is an error that names the plugin and the hook", async () => {
    const plugins = runner(
      [
        {
          name: "thrower",
          beforeToolCall: () => {
            throw new Error("boom");
          },
        },
      ],
      { strict: true },
    );
    await expect(plugins.beforeToolCall(call)).rejects.toThrow(
      "plugin thrower: beforeToolCall failed: boom (--strict-plugins)",
    );
  });
});

describe("notify hooks and the life cycle", () => {
  test("onToolsChanged runs every plugin in parallel, and one failing does not stop the others", async () => {
    const heard: string[] = [];
    let markBStarted: () => void = () => {};
    const bStarted = new Promise<void>((resolve) => {
      markBStarted = resolve;
    });
    // a waits for b to start: run one after the other, a would time out and never be heard.
    const plugins = runner([
      {
        name: "a",
        async onToolsChanged(event) {
          await bStarted;
          heard.push(`a:${event.added.join(",")}`);
        },
      },
      {
        name: "bad",
        onToolsChanged: () => {
          throw new Error("x");
        },
      },
      {
        name: "b",
        onToolsChanged(event) {
          markBStarted();
          heard.push(`b:${event.added.join(",")}`);
        },
      },
    ]);
    await plugins.toolsChanged({ reason: "catalog", added: ["s__t"], removed: [] });
    expect(heard.sort()).toEqual(["a:s__t", "b:s__t"]);
  });

  test("setup runs in order with the context, dispose in reverse order, and dispose errors are collected", async () => {
    const events: string[] = [];
    const plugin = (name: string, failDispose = false): Plugin => ({
      name,
      setup(context) {
        events.push(`setup ${name} ${context.dataDir} ${context.signal.aborted}`);
      },
      dispose() {
        events.push(`dispose ${name}`);
        if (failDispose) throw new Error("stuck");
      },
    });
    const plugins = runner([plugin("a"), plugin("b", true), plugin("c")]);
    await plugins.setup();
    expect(await plugins.dispose()).toEqual(["plugin b: dispose failed: stuck"]);
    expect(events).toEqual([
      "setup a /tmp false",
      "setup b /tmp false",
      "setup c /tmp false",
      "dispose c",
      "dispose b",
      "dispose a",
    ]);
  });

  test("a plugin whose setup fails is off", async () => {
    const used: string[] = [];
    const plugins = runner([
      {
        name: "broken",
        setup: () => {
          throw new Error("no config");
        },
        beforeToolCall: () => void used.push("broken"),
      },
    ]);
    await plugins.setup();
    await plugins.beforeToolCall(call);
    expect(used).toEqual([]);
  });
});
