import { describe, expect, test } from "bun:test";
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/parse-server.ts";
import { eraKey, firstPlan, nextPlan } from "./era-negotiation.ts";

const stdio: ServerConfig = {
  name: "s",
  enabled: true,
  timeoutMs: 30_000,
  transport: "stdio",
  command: "server",
  args: ["--flag"],
  env: {},
};
const sse: ServerConfig = {
  name: "s",
  enabled: true,
  timeoutMs: 30_000,
  transport: "sse",
  url: "http://127.0.0.1/sse",
  headers: {},
};
const discover = { supportedVersions: ["2026-07-28"], capabilities: {}, ttlMs: 0, cacheScope: "public" };
const exited = new SdkError(
  SdkErrorCode.EraNegotiationFailed,
  "Version negotiation failed: the connection closed during the server/discover probe (this transport probed in place)",
);

describe("the era plan of a connect", () => {
  test("uses a stored verdict of the same server, probes a server it has none of or that changed", () => {
    const key = eraKey(stdio);
    expect(firstPlan(stdio, undefined)).toEqual({ kind: "probe" });
    expect(firstPlan(stdio, { era: "legacy", key, checkedAt: 1 })).toEqual({
      kind: "stored",
      prior: { kind: "legacy" },
    });
    expect(firstPlan(stdio, { era: "modern", key, discover, checkedAt: 1 })).toEqual({
      kind: "stored",
      prior: { kind: "modern", discover },
    });
    const moved = { ...stdio, args: ["--other"] };
    expect(firstPlan(moved, { era: "legacy", key, checkedAt: 1 })).toEqual({ kind: "probe" });
    // Not what the server is: its environment (the era key leaves it out).
    expect(eraKey({ ...stdio, env: { A: "1" } })).toBe(key);
  });

  test("the HTTP+SSE transport is always spoken to in the 2025 way", () => {
    expect(firstPlan({ ...sse, transport: "sse" }, undefined)).toEqual({ kind: "legacy" });
  });

  test("a failed stored verdict is judged again; one that failed for another reason is not", () => {
    const legacy = { kind: "stored", prior: { kind: "legacy" } } as const;
    const modern = { kind: "stored", prior: { kind: "modern", discover } } as const;
    expect(nextPlan(legacy, new ProtocolError(-32022, "Unsupported protocol version"))).toEqual({
      kind: "probe",
    });
    expect(nextPlan(legacy, new Error("Connection closed"))).toBeUndefined();
    expect(nextPlan(modern, new Error("Connection closed"))).toEqual({ kind: "probe" });
    expect(
      nextPlan(modern, new SdkHttpError(SdkErrorCode.ClientHttpAuthentication, "401", { status: 401 })),
    ).toBeUndefined();
  });

  test("a child that exits on the probe is started again in the 2025 way, once", () => {
    expect(nextPlan({ kind: "probe" }, exited)).toEqual({ kind: "legacy" });
    expect(nextPlan({ kind: "legacy" }, exited)).toBeUndefined();
  });

  test("initialize refused with -32022 after a probe that timed out: probed again, patiently, once", () => {
    const refused = new ProtocolError(-32022, "Unsupported protocol version: 2025-11-25");
    expect(nextPlan({ kind: "probe" }, refused)).toEqual({ kind: "probe", patient: true });
    expect(nextPlan({ kind: "probe", patient: true }, refused)).toBeUndefined();
  });
});
