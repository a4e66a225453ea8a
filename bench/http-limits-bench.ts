#!/usr/bin/env bun
/**
 * What a hostile or careless HTTP client can make `mcpproxy serve` hold, as the proxy's peak RSS
 * (VmHWM) in three attacks, each on a fresh proxy with the default limits:
 *  - four 100 MB request bodies at once, chunked (no Content-Length to refuse them by);
 *  - 10,000 sessions opened with initialize and abandoned;
 *  - a legacy SSE client that stops reading while 200 results of 1 MB are sent to it.
 * Bounded in count and time; figures, not pass/fail. Linux only (it reads /proc).
 *
 *   bun bench/http-limits-bench.ts
 */
import { connect } from "node:net";
import { createSandbox, fixtureEntry, initializeRequest, startHttpProxy } from "../tests/helpers.ts";
import { peakRssMiB } from "./proxy-process.ts";

const INIT = JSON.stringify(initializeRequest(1, "bench"));

export interface LimitsReport {
  idleRssMiB: number;
  bodies: { rssMiB: number; refused: number };
  sessions: { rssMiB: number; opened: number; refused: number };
  stalled: { rssMiB: number; cutOff: boolean };
}

async function withProxy<T>(run: (port: number, pid: number) => Promise<T>): Promise<T> {
  const sandbox = createSandbox();
  sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
  // Whole results, as before large results were kept aside: a stalled client must be sent megabytes.
  const proxy = await startHttpProxy(sandbox, [], { MCPPROXY_RESULT_SPILL_BYTES: "0" });
  try {
    await proxy.stderr.waitFor(/servers indexed/, 15_000);
    return await run(Number(proxy.url.port), proxy.child.pid);
  } finally {
    await proxy.stop();
    sandbox.cleanup();
  }
}

/** Sends a chunked body of `megabytes` as fast as the proxy takes it; resolves to the status line. */
function chunkedPost(port: number, megabytes: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    const piece = `${(1024 * 1024).toString(16)}\r\n${"x".repeat(1024 * 1024)}\r\n`;
    let sent = 0;
    const pump = () => {
      while (sent < megabytes && !answer) {
        sent++;
        if (!socket.write(piece)) return void socket.once("drain", pump);
      }
    };
    socket.on("connect", () => {
      socket.write(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
      );
      pump();
    });
    socket.on("data", (chunk) => {
      answer ||= chunk.toString("latin1").split("\r\n")[0] ?? "";
      socket.destroy();
      resolve(answer);
    });
    socket.on("error", () => resolve(answer || "error"));
    socket.on("close", () => resolve(answer || "closed"));
  });
}

export async function runLimitsBench(): Promise<LimitsReport> {
  const idleRssMiB = await withProxy(async (_port, pid) => peakRssMiB(pid));
  const bodies = await withProxy(async (port, pid) => {
    const answers = await Promise.all([1, 2, 3, 4].map(() => chunkedPost(port, 100)));
    return { rssMiB: peakRssMiB(pid), refused: answers.filter((line) => line.includes(" 413")).length };
  });
  const sessions = await withProxy(async (port, pid) => {
    let opened = 0;
    let refused = 0;
    const open = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: INIT,
      });
      if (response.status === 200) opened++;
      else if (response.status === 503) refused++;
      await response.body?.cancel();
    };
    for (let batch = 0; batch < 10_000 / 50; batch++) await Promise.all(Array.from({ length: 50 }, open));
    return { rssMiB: peakRssMiB(pid), opened, refused };
  });
  const stalled = await withProxy(async (port, pid) => {
    const socket = connect(port, "127.0.0.1");
    let seen = "";
    socket.on("data", (chunk) => {
      seen += chunk.toString("latin1");
    });
    socket.on("error", () => {});
    socket.write("GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
    const deadline = Date.now() + 5_000;
    while (!/sessionId=\S+/.test(seen) && Date.now() < deadline) await Bun.sleep(20);
    const endpoint = /data: (\/messages\?sessionId=\S+)/.exec(seen)?.[1];
    socket.pause();
    const post = (body: unknown) =>
      fetch(`http://127.0.0.1:${port}${endpoint}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await post(JSON.parse(INIT));
    await post({ jsonrpc: "2.0", method: "notifications/initialized" });
    let cutOff = false;
    for (let i = 0; i < 200 && !cutOff; i++) {
      const response = await post({
        jsonrpc: "2.0",
        id: 100 + i,
        method: "tools/call",
        params: { name: "call_tool", arguments: { name: "fx__big_result", arguments: { bytes: 1_000_000 } } },
      });
      cutOff = response.status === 404;
      await Bun.sleep(20);
    }
    await Bun.sleep(2_000);
    cutOff ||= (await post({ jsonrpc: "2.0", id: 1_000, method: "ping" })).status === 404;
    socket.destroy();
    return { rssMiB: peakRssMiB(pid), cutOff };
  });
  return { idleRssMiB, bodies, sessions, stalled };
}

export function formatLimitsReport(report: LimitsReport): string {
  const f = (n: number) => n.toFixed(0);
  return [
    `HTTP limits, serve peak RSS (idle after start: ${f(report.idleRssMiB)} MiB):`,
    `  four 100 MB chunked bodies at once: ${f(report.bodies.rssMiB)} MiB; ${report.bodies.refused} of 4 refused with 413`,
    `  10,000 sessions opened and abandoned: ${f(report.sessions.rssMiB)} MiB; ${report.sessions.opened} opened, ${report.sessions.refused} refused with 503`,
    `  an SSE client that stops reading, 1 MB results sent to it: ${f(report.stalled.rssMiB)} MiB; ${report.stalled.cutOff ? "cut off" : "NOT cut off"}`,
  ].join("\n");
}

if (import.meta.main) process.stdout.write(`${formatLimitsReport(await runLimitsBench())}\n`);
