import type { Tool } from "@modelcontextprotocol/client";
import type { UpstreamAuth } from "../auth/upstream-auth.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import type { CallGateFactory, GateStatus } from "../limits/call-gate.ts";
import type { Logger } from "../log.ts";
import type { EraStore } from "../store/sqlite/era-store.ts";
import type { InstructionStore } from "../store/sqlite/server-instructions.ts";
import type { ClientPriority } from "./client-priority.ts";
import type { ClientSide } from "./relay-routing.ts";
import type { ListedCapabilities } from "./server-lists.ts";

/**
 * What the upstream pool (upstream-pool.ts) and its servers' slots (server-slot.ts) share: a
 * server's state and status, the outcome of a connect, and the pool's options.
 */

/** Where a server stands. */
export type ServerState =
  | "configured"
  | "connecting"
  | "connected"
  | "restarting"
  | "failed"
  | "needs-login"
  | "awaiting-approval"
  | "disabled";

export interface ServerStatus {
  name: string;
  state: ServerState;
  transport: ServerConfig["transport"];
  toolCount: number;
  /** Why it is not connected (failed, restarting), or why it last failed while it reconnects. */
  error?: string | undefined;
  /** When the current connection was made (ms since the epoch). */
  connectedSince?: number | undefined;
  /** When the background retry tries it next (ms since the epoch), while one is scheduled. */
  retryAt?: number | undefined;
  /** Failed starts (and early deaths) in a row. */
  failures?: number | undefined;
  /** Set after CIRCUIT_THRESHOLD failures: calls fail at once until `retryAt`. */
  circuitOpen?: boolean | undefined;
  /** While connected: the protocol version spoken with it (2026-07-28 is the modern era). */
  protocolVersion?: string | undefined;
  /** Its call limits and how they are doing (in flight, queued, refused), when it has limits. */
  limits?: GateStatus | undefined;
}

export interface ConnectOutcome {
  server: string;
  tools?: readonly Tool[] | undefined;
  /** Malformed tools/list entries that were left out. */
  skipped?: readonly string[] | undefined;
  /** Its prompts and resource templates, as it listed them when it connected. */
  listed?: ListedCapabilities | undefined;
  error?: string | undefined;
  /** Not started: an agent wrote it and a person has not approved it (`mcpproxy approve`). */
  awaitingApproval?: boolean | undefined;
  /** Not started: its config cannot run as it is (a variable it needs is not set); `error` says why. */
  notStarted?: boolean | undefined;
  /** Not connected because the pool closed first (the proxy is stopping): not a failure of the server. */
  stopped?: boolean | undefined;
}

export interface UpstreamPoolOptions {
  servers: readonly ServerConfig[];
  logger: Logger;
  /**
   * A server's tools may have changed: it sent `notifications/tools/list_changed`, or it connected
   * again after a failure (its list is then fresh), or a lazy server connected for a call (what it
   * listed then, prompts and templates included). Not called for other first connections.
   */
  onToolsChanged?: (server: string, tools: readonly Tool[], listed?: ListedCapabilities) => void;
  env?: Readonly<Record<string, string | undefined>>;
  /** How long a call may go without an answer or progress, for servers without their own callTimeoutMs. */
  callTimeoutMs?: number;
  /** The most a call may take, progress or not. */
  maxCallMs?: number;
  /** The proxy chain passed to every server (see proxy-ancestry.ts). */
  ancestry?: string;
  /** The longest message accepted from a server (any transport), in bytes. */
  maxResultBytes?: number;
  /** Bounds on each server's whole tool list (a server's own settings win). */
  maxTools?: number;
  maxToolListBytes?: number;
  /** How often HTTP servers are pinged while connected (0 or unset: never). */
  healthCheckMs?: number;
  /** Where servers' requests and notifications to the client go (relay-routing.ts); unset, requests are refused. */
  clientSide?: ClientSide | undefined;
  /**
   * OAuth for HTTP servers (src/auth/upstream-auth.ts). A server that needs a login is
   * `needs-login`: not retried until its login changes, then connected again.
   */
  auth?: UpstreamAuth | undefined;
  /**
   * Aborted when the proxy stops (its client left, a signal): the pool closes and every stdio
   * server, connected or still starting, is ended at once with its helpers.
   */
  stopSignal?: AbortSignal | undefined;
  /** Each server's protocol era, remembered between runs (the catalog's); unset, for the pool's life only. */
  eras?: EraStore | undefined;
  /** Where each server's `instructions` are kept when it connects (the catalog's); unset, nowhere. */
  instructions?: InstructionStore | undefined;
  /** Makes each server's door (its call limits); unset, this process's own (call-gate.ts). */
  gateOf?: CallGateFactory | undefined;
  /** Told of the clients' requests: connectAll keeps fewer connects in flight while they ask (client-priority.ts). */
  clientPriority?: ClientPriority | undefined;
}
