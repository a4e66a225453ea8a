import { createHash } from "node:crypto";
import type { Logger } from "../log.ts";
import { canonicalJson } from "../security/canonical-json.ts";
import type {
  CapabilityKind,
  CapabilityRow,
  CapabilityStore,
  StoredCapability,
} from "../store/sqlite/capability-store.ts";
import type { ApprovalPolicy } from "./tool-approvals.ts";

/**
 * Pinning for what a server offers besides tools, as tool-approvals.ts does for tools: its prompts
 * and resource templates are approved by the hash of what the model reads of them. A server's first
 * listing of a kind is accepted on first sight (unless the server is quarantined whole); later, a
 * prompt or template that is new or changed waits for `mcpproxy approve` and is hidden and refused
 * meanwhile. A server held whole (quarantined on first sight: `quarantined`, `quarantineNewServers`,
 * or written by an agent) exposes nothing until a person approves it.
 */
type PinnedKind = Exclude<CapabilityKind, "server">;

export interface QuarantinedCapability {
  server: string;
  kind: PinnedKind;
  name: string;
  reason: "new" | "changed";
  findings: string[];
  definition: Record<string, unknown>;
  /** What it was approved as, when it changed. */
  approved?: Record<string, unknown> | undefined;
}

export interface CapabilityApprovals {
  /** Reviews what a server lists of one kind now; resolves to the items that may be shown. */
  review<T extends { name: string }>(server: string, kind: PinnedKind, items: readonly T[]): T[];
  /** Not approved as the server last listed it (or never listed). */
  isHeld(server: string, kind: PinnedKind, name: string): boolean;
  /** Why the whole server is held (quarantined on first sight, nothing approved yet), or undefined. */
  serverHold(server: string): string | undefined;
  quarantined(): QuarantinedCapability[];
  /** What is held now, without definitions or findings (cheaper than `quarantined`). */
  held(): Pick<QuarantinedCapability, "server" | "kind" | "name" | "reason">[];
  /** Approves these as they were listed last; resolves to how many. */
  approve(items: readonly { server: string; kind: PinnedKind; name: string }[]): number;
  /** A person approved a server held whole: it may show what it approves. */
  approveServer(server: string): void;
  /** Changes when approvals may have changed (capability-store.ts `version`). */
  version(): string;
}

/** The hash of what the model reads of an item (its `_meta` and icons are not read). */
function capabilityHash(item: Record<string, unknown>): string {
  const { _meta: _, icons: __, ...read } = item;
  return createHash("sha256").update(canonicalJson(read)).digest("hex");
}

export function openCapabilityApprovals(
  store: CapabilityStore,
  policy: ApprovalPolicy,
  hasToolApprovals: (server: string) => boolean,
  logger: Logger,
): CapabilityApprovals {
  const key = (row: { server: string; kind: string; name: string }) =>
    `${row.server}\u0000${row.kind}\u0000${row.name}`;
  const approvedHashes = () => new Map(store.approvals().map((row) => [key(row), row.hash]));
  /** The hashes last written per server and kind: an unchanged listing is not written again. */
  const lastListed = new Map<string, string>();
  const warned = new Set<string>();

  const approvals: CapabilityApprovals = {
    review(server, kind, items) {
      const approved = approvedHashes();
      const rows: StoredCapability[] = items.map((item) => {
        const definition = item as unknown as Record<string, unknown>;
        return { server, kind, name: item.name, hash: capabilityHash(definition), definition };
      });
      const stamp = rows.map((row) => `${row.name}:${row.hash}`).join(",");
      if (lastListed.get(`${server}\u0000${kind}`) !== stamp) {
        store.putListed(server, kind, rows);
        lastListed.set(`${server}\u0000${kind}`, stamp);
      }
      const isFirstSight = !approved.has(key({ server, kind, name: "" }));
      const isTrusted = policy.trustOf(server) === "auto" || (isFirstSight && !policy.quarantinesNew(server));
      const accept: (CapabilityRow & { definition: Record<string, unknown> })[] = [];
      const shown = new Set<string>();
      for (const row of rows) {
        if (approved.get(key(row)) === row.hash) {
          shown.add(row.name);
          continue;
        }
        const findings = policy.findingsOf(server, row.definition, kind);
        if (isTrusted && !(policy.blockFindings && findings.length > 0)) {
          accept.push(row);
          shown.add(row.name);
        } else if (!warned.has(key(row) + row.hash)) {
          warned.add(key(row) + row.hash);
          logger.warn(
            `${server} ${kind} ${row.name} ${approved.has(key(row)) ? "changed since it was approved" : "is new"}: ` +
              `held (not listed, refused) until \`mcpproxy approve ${server}\`${findings.length > 0 ? `; may be poisoned: ${findings.join("; ")}` : ""}`,
          );
        }
      }
      if (isTrusted && isFirstSight)
        accept.push({ server, kind, name: "", hash: "first-sight", definition: {} });
      if (accept.length > 0) store.approve(accept);
      return items.filter((item) => shown.has(item.name));
    },

    isHeld(server, kind, name) {
      const approved = approvedHashes().get(key({ server, kind, name }));
      const listed = store
        .listed()
        .find((row) => row.server === server && row.kind === kind && row.name === name);
      return approved === undefined || (listed !== undefined && listed.hash !== approved);
    },

    serverHold(server) {
      if (!policy.quarantinesNew(server) || hasToolApprovals(server)) return undefined;
      if (store.approvals().some((row) => row.server === server)) return undefined;
      return `${server} is new and held for review: nothing of it is offered until the user runs \`mcpproxy approve ${server}\``;
    },

    quarantined() {
      const approved = approvedHashes();
      return store
        .listed()
        .filter((row) => row.kind !== "server" && approved.get(key(row)) !== row.hash)
        .map((row) => {
          const before = store.approvedDefinition(row.server, row.kind, row.name);
          return {
            server: row.server,
            kind: row.kind as PinnedKind,
            name: row.name,
            reason: approved.has(key(row)) ? ("changed" as const) : ("new" as const),
            findings: policy.findingsOf(row.server, row.definition, row.kind as PinnedKind),
            definition: row.definition,
            ...(before ? { approved: before } : {}),
          };
        });
    },

    held() {
      const approved = approvedHashes();
      return store
        .listed()
        .filter((row) => row.kind !== "server" && approved.get(key(row)) !== row.hash)
        .map((row) => ({
          server: row.server,
          kind: row.kind as PinnedKind,
          name: row.name,
          reason: approved.has(key(row)) ? ("changed" as const) : ("new" as const),
        }));
    },

    approve(items) {
      const listed = new Map(store.listed().map((row) => [key(row), row]));
      const rows = items.flatMap((item) => {
        const row = listed.get(key(item));
        return row ? [row] : [];
      });
      store.approve(rows);
      return rows.length;
    },

    approveServer(server) {
      store.approve([{ server, kind: "server", name: "", hash: "approved" }]);
    },

    version: () => store.version(),
  };
  return approvals;
}
