import { createHash } from "node:crypto";
import {
  type Client,
  type DiscoverResult,
  type PriorDiscovery,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  type VersionNegotiationOptions,
} from "@modelcontextprotocol/client";
import { isLoginNeeded } from "../auth/oauth-provider.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { canonicalJson } from "../security/canonical-json.ts";
import type { EraVerdict } from "../store/sqlite/era-store.ts";

/**
 * Which protocol era the proxy speaks to a server (MCP 2026-07-28 or the 2025 revisions), decided
 * per server and remembered in the catalog (index/era-store.ts) so the next connect does not ask
 * again. One connect makes up to three attempts, each on a fresh child or session:
 *
 *  1. `stored`: the verdict of an earlier connect, given to the SDK as `prior` (no probe). A
 *     verdict that no longer holds is judged again: a modern one that fails in any way, a legacy
 *     one whose initialize or tools/list the server answered with an error (a server that became
 *     modern-only refuses initialize with -32022).
 *  2. `probe`: `server/discover` first, `initialize` when the server gives no modern answer. The
 *     probe runs in place, on the child the proxy started (no second spawn), with a short timeout
 *     on stdio, where silence means a 2025 server.
 *  3. After the probe:
 *     - `legacy` when the child exited on the probe (servers built on rmcp exit on any first
 *       request but initialize): it is started again and spoken to in the 2025 way;
 *     - `patient probe` when the probe timed out and initialize was then refused with -32022 (a
 *       2026-only server slow to start): probed again, with the time that is left.
 * The HTTP+SSE transport predates 2026 and is always spoken to in the 2025 way.
 */
export type EraPlan =
  | { kind: "stored"; prior: PriorDiscovery }
  | { kind: "probe"; patient?: boolean }
  | { kind: "legacy" };

/** On stdio, how long the probe waits for an answer before the server counts as a 2025 one. */
const PROBE_TIMEOUT_MS = 5_000;

/** What the server is, as far as its era goes: another command or URL under the same name is judged again. */
export function eraKey(server: ServerConfig): string {
  const what =
    server.transport === "stdio"
      ? { transport: server.transport, command: server.command, args: server.args, cwd: server.cwd ?? null }
      : { transport: server.transport, url: server.url };
  return `sha256:${createHash("sha256").update(canonicalJson(what)).digest("hex").slice(0, 32)}`;
}

export function firstPlan(server: ServerConfig, stored: EraVerdict | undefined): EraPlan {
  if (server.transport === "sse") return { kind: "legacy" };
  if (!stored || stored.key !== eraKey(server)) return { kind: "probe" };
  if (stored.era === "legacy") return { kind: "stored", prior: { kind: "legacy" } };
  return stored.discover
    ? { kind: "stored", prior: { kind: "modern", discover: stored.discover as DiscoverResult } }
    : { kind: "probe" };
}

/** The attempt after one that failed with `error`, or undefined when the failure is the server's answer. */
export function nextPlan(plan: EraPlan, error: unknown): EraPlan | undefined {
  if (isAuthFailure(error)) return undefined;
  switch (plan.kind) {
    case "stored":
      if (plan.prior.kind === "modern") return { kind: "probe" };
      return error instanceof ProtocolError || isInvalidResult(error) ? { kind: "probe" } : undefined;
    case "probe":
      if (exitedOnProbe(error)) return { kind: "legacy" };
      if (!plan.patient && error instanceof ProtocolError && error.code === UNSUPPORTED_PROTOCOL_VERSION)
        return { kind: "probe", patient: true };
      return undefined;
    case "legacy":
      return undefined;
  }
}

const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The child closed its end while the in-place probe waited for an answer. */
export function exitedOnProbe(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    /closed during the server\/discover probe/.test(error.message)
  );
}

function isInvalidResult(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.InvalidResult;
}

/** A login is needed or was refused: trying another era would only ask again. */
function isAuthFailure(error: unknown): boolean {
  if (isLoginNeeded(error)) return true;
  return error instanceof SdkHttpError && (error.status === 401 || error.status === 403);
}

/** The client's negotiation for an attempt; `prior` (below) skips it. */
export function negotiationFor(
  plan: EraPlan,
  server: ServerConfig,
  remainingMs: number,
): VersionNegotiationOptions {
  if (plan.kind !== "probe") return { mode: "legacy" };
  // On stdio a silent server is a 2025 one: wait briefly. Over HTTP silence is an outage, not an
  // answer, and the whole connect time is the probe's.
  const timeoutMs =
    server.transport === "stdio" && !plan.patient
      ? Math.max(1, Math.min(PROBE_TIMEOUT_MS, Math.floor(remainingMs / 2)))
      : Math.max(1, remainingMs);
  return { mode: "auto", probe: { timeoutMs } };
}

export function priorFor(plan: EraPlan): PriorDiscovery | undefined {
  if (plan.kind === "stored") return plan.prior;
  return plan.kind === "legacy" ? { kind: "legacy" } : undefined;
}

/** What a connected client tells of its server's era, to be remembered. */
export function verdictOf(client: Client, server: ServerConfig, now = Date.now()): EraVerdict | undefined {
  const era = client.getProtocolEra();
  if (!era) return undefined;
  const discover = era === "modern" ? client.getDiscoverResult() : undefined;
  return {
    era,
    key: eraKey(server),
    protocolVersion: client.getNegotiatedProtocolVersion(),
    ...(discover ? { discover: discover as unknown as Record<string, unknown> } : {}),
    checkedAt: now,
  };
}

/** A verdict is written again only when it changed or is a day old (a connect must not cost a write). */
export function isWorthStoring(fresh: EraVerdict, stored: EraVerdict | undefined): boolean {
  if (!stored) return true;
  return (
    fresh.era !== stored.era ||
    fresh.key !== stored.key ||
    fresh.protocolVersion !== stored.protocolVersion ||
    canonicalJson(fresh.discover ?? null) !== canonicalJson(stored.discover ?? null) ||
    fresh.checkedAt - stored.checkedAt > 24 * 60 * 60_000
  );
}
