import { type ChildProcess, spawn } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { createJsonLineSplitter, idOfTruncatedMessage, type OversizedLine } from "./json-lines.ts";

/**
 * The MCP stdio transport to an upstream server we start ourselves. Unlike the SDK's
 * StdioClientTransport it
 *  - starts the server in a process group of its own, and ends the whole group: a server's helper
 *    processes (a language server, a browser) do not outlive it or the proxy;
 *  - ends a server the polite way first (close stdin, then SIGTERM, then SIGKILL), also when it
 *    is still starting up;
 *  - bounds every message the server sends: an over-long one is skipped and, when it answered a
 *    request, that request gets a JSON-RPC error naming the limit; the server stays up.
 */
export interface ChildProcessTransportOptions {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string | undefined;
  /** The longest message accepted from the server, in bytes. */
  maxResultBytes: number;
  /** Every chunk the server writes to stderr. */
  onStderr?: (chunk: Uint8Array) => void;
  /** How long a server may take to exit after stdin closes, then again after SIGTERM. */
  graceMs?: number;
}

export const DEFAULT_GRACE_MS = 2_000;
/**
 * A server error code (JSON-RPC reserves -32000 to -32099 for them) for a response too large to
 * pass on; MCP and the SDK use -32000, -32001 and -32002 for other things.
 */
export const MESSAGE_TOO_LARGE = -32010;
const IS_WINDOWS = process.platform === "win32";

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private hasExited = false;
  private closing: Promise<void> | undefined;
  private readonly exitedPromise: Promise<void>;
  private markExited: () => void = () => {};

  constructor(private readonly options: ChildProcessTransportOptions) {
    this.exitedPromise = new Promise((resolve) => {
      this.markExited = resolve;
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("ChildProcessTransport already started");
    const { command, args, env, cwd, maxResultBytes } = this.options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], {
        env,
        ...(cwd ? { cwd } : {}),
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        // Its own process group (setsid), so the whole group can be ended; see terminate().
        detached: !IS_WINDOWS,
        windowsHide: true,
      });
      this.child = child;
      const splitter = createJsonLineSplitter(
        maxResultBytes,
        (line) => this.receive(line),
        (line) => this.receiveOversized(line),
      );
      child.once("error", (error) => {
        if (child.pid === undefined) reject(error);
        else this.onerror?.(error);
      });
      child.once("spawn", () => resolve());
      child.once("exit", () => {
        this.hasExited = true;
        // The server is gone; helpers it left in its group go with it.
        this.signalGroup("SIGTERM");
        setTimeout(() => this.signalGroup("SIGKILL"), this.options.graceMs ?? DEFAULT_GRACE_MS).unref();
      });
      child.once("close", () => {
        this.markExited();
        this.onclose?.();
      });
      child.stdout?.on("data", (chunk: Uint8Array) => splitter.push(chunk));
      child.stderr?.on("data", (chunk: Uint8Array) => this.options.onStderr?.(chunk));
      for (const stream of [child.stdin, child.stdout, child.stderr]) {
        stream?.on("error", (error) => this.onerror?.(error));
      }
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.hasExited || stdin.destroyed) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve, reject) => {
      const ok = stdin.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) reject(error);
      });
      if (ok) resolve();
      else stdin.once("drain", () => resolve());
    });
  }

  /** Ends the server and every process in its group; resolves once the server has exited. */
  close(): Promise<void> {
    this.closing ??= this.terminate();
    return this.closing;
  }

  private async terminate(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    const grace = this.options.graceMs ?? DEFAULT_GRACE_MS;
    const exitedWithin = (ms: number) =>
      Promise.race([this.exitedPromise.then(() => true), Bun.sleep(ms).then(() => false)]);
    if (!this.hasExited) {
      child.stdin?.end();
      if (!(await exitedWithin(grace))) {
        this.signalGroup("SIGTERM");
        if (!(await exitedWithin(grace))) {
          this.signalGroup("SIGKILL");
          await exitedWithin(grace);
        }
      }
    }
    this.signalGroup("SIGKILL");
  }

  /** Signals the server's whole process group (or the server alone where there are no groups). */
  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      if (IS_WINDOWS) this.child?.kill(signal);
      else process.kill(-pid, signal);
    } catch {
      // ESRCH: nothing left in the group.
    }
  }

  private receive(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.onerror?.(new Error(`the server wrote a line that is not JSON: ${line.slice(0, 120)}`));
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) {
      this.onerror?.(new Error(`the server wrote JSON that is not JSON-RPC: ${line.slice(0, 120)}`));
      return;
    }
    this.onmessage?.(message.data);
  }

  private receiveOversized(line: OversizedLine): void {
    const limit = this.options.maxResultBytes;
    const text =
      `the server sent a message of ${line.bytes} bytes, over the limit of ${limit} bytes ` +
      "(maxResultBytes, MCPPROXY_MAX_RESULT_BYTES); it was dropped";
    const id = idOfTruncatedMessage(line.head, line.tail);
    // Only a response can be answered in its place: a request or notification from the server is dropped.
    const isRequest = /^\s*\{\s*("jsonrpc"\s*:\s*"2\.0"\s*,\s*("id"\s*:[^,]*,\s*)?)?"method"\s*:/.test(
      line.head,
    );
    if (id !== undefined && !isRequest) {
      this.onmessage?.({ jsonrpc: "2.0", id, error: { code: MESSAGE_TOO_LARGE, message: text } });
    }
    this.onerror?.(new Error(text));
  }
}
