import { describeError } from "../../errors.ts";
import { createOutputTail } from "../../output-tail.ts";
import type { Plugin, PluginLogger, ToolsChangedEvent } from "../../plugin-api.ts";

/**
 * The built-in list-changed hook (MCPPROXY_LIST_CHANGED_EXEC): after the registered tools of a
 * session changed (dynamic routing), runs the configured command, for clients that do not act on
 * `notifications/tools/list_changed` but reload when a file is touched, say. The command is an argv
 * run without a shell (a command that wants one says so: `sh -c '…'`), with the proxy's environment
 * plus MCPPROXY_EVENT_REASON, MCPPROXY_SESSION, MCPPROXY_TOOLS_ADDED and MCPPROXY_TOOLS_REMOVED
 * (comma-separated public names), and the event as JSON on stdin. Runs never overlap: changes that
 * arrive while one runs are coalesced into one more run. Each run gets 5 s; its output is logged,
 * bounded; a failure is logged and never reaches the agent.
 */
const EXEC_TIMEOUT_MS = 5_000;

export interface ListChangedExecOptions {
  argv: readonly string[];
  timeoutMs?: number;
  env?: Readonly<Record<string, string | undefined>>;
}

export function listChangedExecPlugin(options: ListChangedExecOptions): Plugin {
  const [command, ...args] = options.argv;
  const timeoutMs = options.timeoutMs ?? EXEC_TIMEOUT_MS;
  let logger: PluginLogger | undefined;
  let running: Promise<void> | undefined;
  let next: ToolsChangedEvent | undefined;

  const runOnce = async (event: ToolsChangedEvent) => {
    const output = createOutputTail(10, 2000);
    const started = performance.now();
    try {
      // execa and the node:child_process it brings are imported at the first run, not by every serve.
      const { execa } = await import("execa");
      const child = execa(command!, args, {
        input: `${JSON.stringify(event)}\n`,
        env: {
          ...options.env,
          MCPPROXY_EVENT_REASON: event.reason,
          MCPPROXY_SESSION: event.session ?? "",
          MCPPROXY_TOOLS_ADDED: event.added.join(","),
          MCPPROXY_TOOLS_REMOVED: event.removed.join(","),
        },
        extendEnv: false,
        timeout: timeoutMs,
        forceKillAfterDelay: 1_000,
        buffer: false,
        reject: false,
        stdout: "pipe",
        stderr: "pipe",
      });
      child.stdout?.on("data", (chunk: Uint8Array) => output.push(chunk));
      child.stderr?.on("data", (chunk: Uint8Array) => output.push(chunk));
      const result = await child;
      const ms = Math.round(performance.now() - started);
      const said = output.text() ? `; it said: ${output.text().split("\n").join(" | ")}` : "";
      if (result.timedOut)
        logger?.warn(`${command} did not finish within ${timeoutMs} ms and was stopped${said}`);
      else if (result.failed) logger?.warn(`${command} failed after ${ms} ms: ${result.shortMessage}${said}`);
      else logger?.info(`ran ${command} in ${ms} ms${said}`);
    } catch (error) {
      logger?.warn(`${command} could not run: ${describeError(error)}`);
    }
  };

  const drain = async () => {
    while (next) {
      const event = next;
      next = undefined;
      await runOnce(event);
    }
    running = undefined;
  };

  return {
    name: "list-changed-exec",
    setup(context) {
      logger = context.logger;
    },
    onToolsChanged(event) {
      if (event.session === undefined || !command) return;
      next = event;
      // Not awaited: the command may take longer than a hook may (its own timeout bounds it).
      running ??= drain();
    },
    async dispose() {
      await running;
    },
  };
}
