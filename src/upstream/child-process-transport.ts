import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { createJsonLineSplitter, type OversizedLine } from "../json-line-splitter.ts";
import { answerInPlaceOf, isJsonRpcMessage, tooLargeText } from "./json-lines.ts";

/**
 * The MCP stdio transport to an upstream server we start ourselves. Unlike the SDK's
 * StdioClientTransport it
 *  - starts the server in a process group of its own, and ends the whole group: a server's helper
 *    processes (a language server, a browser) do not outlive it or the proxy;
 *  - ends a server the polite way first (close stdin, then SIGTERM, then SIGKILL), also when it
 *    is still starting up. When the proxy itself stops (`stopSignal`), at once instead: stdin
 *    closed and SIGTERM together, SIGKILL after PROMPT_KILL_MS. The proxy's own client gives it
 *    about 2 s after closing its stdin (the SDK's schedule is the polite one too), so on the
 *    polite schedule the proxy was killed first and its servers outlived it;
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
  /** Aborted when the proxy stops: the server is ended at once (see `stopNow`), not politely. */
  stopSignal?: AbortSignal | undefined;
}

const DEFAULT_GRACE_MS = 2_000;
/** When the proxy stops, how long a server's group has between SIGTERM and SIGKILL. */
const PROMPT_KILL_MS = 1_000;
const IS_WINDOWS = process.platform === "win32";

type Child = Bun.Subprocess<"pipe", "pipe", "pipe">;

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** The protocol version initialize settled on (the SDK client sets it), for `doctor`. */
  protocolVersion: string | undefined;
  private child: Child | undefined;
  private hasExited = false;
  private isStopping = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: ChildProcessTransportOptions) {}

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /**
   * `pid` and `stderr` make the SDK treat this as a stdio transport when it probes for the
   * server's era in place (on this child, not a second one): silence or an exit during the probe
   * then reads as a 2025 server, not as an error. The stream itself is read here (`onStderr`).
   */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get stderr(): ReadableStream<Uint8Array> | null {
    return this.child?.stderr ?? null;
  }

  /** The server ended by a signal (killed from outside, or stopped by us), not by exiting itself. */
  get wasKilled(): boolean {
    return this.hasExited && Boolean(this.child?.signalCode);
  }

  /**
   * Bun's own spawn and pipes, not node:child_process: on the call path its streams and events
   * cost more than the calls they carry (measured with bench/call-overhead.ts).
   */
  async start(): Promise<void> {
    if (this.child) throw new Error("ChildProcessTransport already started");
    const { command, args, env, cwd, maxResultBytes, stopSignal } = this.options;
    if (stopSignal?.aborted) throw new Error("the proxy is shutting down");
    const child: Child = Bun.spawn([command, ...args], {
      env,
      ...(cwd ? { cwd } : {}),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
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
    const stdoutDone = this.drain(child.stdout, (chunk) => splitter.push(chunk));
    const stderrDone = this.drain(child.stderr, (chunk) => this.options.onStderr?.(chunk));
    const onStop = () => void this.stopNow();
    stopSignal?.addEventListener("abort", onStop, { once: true });
    void child.exited.then(async () => {
      this.hasExited = true;
      stopSignal?.removeEventListener("abort", onStop);
      // The server is gone; helpers it left in its group go with it.
      this.signalGroup("SIGTERM");
      setTimeout(() => this.signalGroup("SIGKILL"), this.options.graceMs ?? DEFAULT_GRACE_MS).unref();
      // Its last words (a final response, its stderr) are read before the connection is reported closed.
      await Promise.all([stdoutDone, stderrDone]);
      this.onclose?.();
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.hasExited) return Promise.reject(new Error("Not connected"));
    try {
      stdin.write(`${JSON.stringify(message)}\n`);
      const flushed = stdin.flush();
      return flushed instanceof Promise ? flushed.then(() => undefined) : Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Ends the server and every process in its group; resolves once the server has exited. */
  close(): Promise<void> {
    this.closing ??= this.terminate();
    return this.closing;
  }

  /**
   * Ends the server at once, the proxy is stopping: stdin closed and SIGTERM to its whole group
   * together, SIGKILL PROMPT_KILL_MS later. Resolves once the server has exited and its group is killed.
   */
  stopNow(): Promise<void> {
    const child = this.child;
    if (child && !this.hasExited && !this.isStopping) {
      this.isStopping = true;
      try {
        void Promise.resolve(child.stdin.end()).catch(() => undefined);
      } catch {
        // Its stdin is gone already.
      }
      this.signalGroup("SIGTERM");
      setTimeout(() => this.signalGroup("SIGKILL"), PROMPT_KILL_MS);
    }
    return this.close();
  }

  private async drain(
    stream: ReadableStream<Uint8Array>,
    onChunk: (chunk: Uint8Array) => void,
  ): Promise<void> {
    try {
      for await (const chunk of stream) onChunk(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  private async terminate(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const grace = this.options.graceMs ?? DEFAULT_GRACE_MS;
    const exitedWithin = (ms: number) =>
      Promise.race([child.exited.then(() => true), Bun.sleep(ms).then(() => false)]);
    if (!this.hasExited) {
      try {
        await child.stdin.end();
      } catch {
        // Its stdin is gone already.
      }
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
    if (!isJsonRpcMessage(parsed)) {
      this.onerror?.(new Error(`the server wrote JSON that is not JSON-RPC: ${line.slice(0, 120)}`));
      return;
    }
    this.onmessage?.(parsed as JSONRPCMessage);
  }

  private receiveOversized(line: OversizedLine): void {
    const limit = this.options.maxResultBytes;
    // Only a response can be answered in its place: a request or notification from the server is dropped.
    const error = answerInPlaceOf(line.head, line.tail, line.bytes, limit);
    if (error) this.onmessage?.(error);
    this.onerror?.(new Error(tooLargeText(String(line.bytes), limit)));
  }
}
