import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { StoredOAuthClientInformation, StoredOAuthTokens } from "@modelcontextprotocol/client";
import { writeFileAtomicSync } from "../atomic-file.ts";

/**
 * What mcpproxy keeps of one remote server's OAuth login, in `<data dir>/oauth/<server>-<hash>.json`
 * (0600, directory 0700). Bound to the server's URL: a server whose URL changed starts over.
 * Credentials are kept per authorization server, keyed by its `issuer` (SEP-2352): a client
 * registration or a token is only ever shown to the authorization server that issued it, and when
 * the server moves to another one the old record stays, unused, beside the new one. The values are
 * kept as the SDK gave them, its `issuer` stamp included. Tokens are never logged;
 * `mcpproxy auth status` shows only whether they exist and when they expire.
 */
export interface OAuthRecord {
  serverUrl: string;
  /** Credentials per authorization server issuer. */
  issuers: Record<string, OAuthCredentials>;
  /** The issuer of the tokens saved last: the ones sent to the server. */
  current?: string | undefined;
  /** Where the server's protected-resource metadata was found (its WWW-Authenticate may name it). */
  resourceMetadataUrl?: string | undefined;
  /**
   * The scope the server asked for when it refused a call for want of scope (403
   * insufficient_scope, SEP-2350), with what was held then: the next login asks for all of it.
   */
  stepUpScope?: string | undefined;
}

export interface OAuthCredentials {
  clientInformation?: StoredOAuthClientInformation | undefined;
  tokens?: StoredOAuthTokens | undefined;
  /** When the access token expires (ms since the epoch), from `expires_in` at the time it was saved. */
  expiresAt?: number | undefined;
}

export interface OAuthStore {
  readonly path: string;
  load(): OAuthRecord;
  update(change: (record: OAuthRecord) => OAuthRecord): OAuthRecord;
  clear(): boolean;
  /**
   * A store several processes share (auth/shared-oauth-store.ts): runs a token refresh alone among
   * them, with the record read afresh before `work` and written before the next one's turn.
   */
  refreshAlone?(work: () => Promise<void>): Promise<void>;
}

function oauthDir(dataDir: string): string {
  return join(dataDir, "oauth");
}

/** A file name for the server that no name can escape from, unique per name. */
export function oauthFileNameOf(server: string): string {
  const safe = server.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 60);
  return `${safe}-${createHash("sha256").update(server).digest("hex").slice(0, 8)}`;
}

/** The credentials whose tokens are sent to the server now. */
export function currentCredentials(record: OAuthRecord): OAuthCredentials | undefined {
  return record.current === undefined ? undefined : record.issuers[record.current];
}

/** The record with `change` made to one issuer's credentials. */
export function withCredentials(
  record: OAuthRecord,
  issuer: string,
  change: (credentials: OAuthCredentials) => OAuthCredentials,
): OAuthRecord {
  return { ...record, issuers: { ...record.issuers, [issuer]: change(record.issuers[issuer] ?? {}) } };
}

export function openOAuthStore(dataDir: string, server: string, serverUrl: string): OAuthStore {
  const path = join(oauthDir(dataDir), `${oauthFileNameOf(server)}.json`);
  const empty = (): OAuthRecord => ({ serverUrl, issuers: {} });
  const load = (): OAuthRecord => {
    if (!existsSync(path)) return empty();
    try {
      const record = upgraded(JSON.parse(readFileSync(path, "utf8")));
      return record?.serverUrl === serverUrl ? record : empty();
    } catch {
      return empty();
    }
  };
  return {
    path,
    load,
    update(change) {
      const next = change(load());
      writeFileAtomicSync(path, `${JSON.stringify(next, null, 2)}\n`);
      return next;
    },
    clear() {
      if (!existsSync(path)) return false;
      rmSync(path, { force: true });
      return true;
    },
  };
}

/**
 * A record as read from disk. Files written before credentials were keyed by issuer held one
 * registration and one token set, with the discovered metadata: they are filed under the issuer
 * that metadata names, so an upgrade does not cost a login. Without one they are not used (nothing
 * says which authorization server they belong to); the next login replaces them.
 */
function upgraded(parsed: unknown): OAuthRecord | undefined {
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const record = parsed as Partial<OAuthRecord> & Record<string, unknown>;
  if (typeof record.serverUrl !== "string") return undefined;
  if (typeof record.issuers === "object" && record.issuers !== null) return record as OAuthRecord;
  const { clientInformation, tokens, expiresAt, discoveryState } = record as {
    clientInformation?: StoredOAuthClientInformation;
    tokens?: StoredOAuthTokens;
    expiresAt?: number;
    discoveryState?: { authorizationServerUrl?: string; authorizationServerMetadata?: { issuer?: string } };
  };
  const upgrade: OAuthRecord = { serverUrl: record.serverUrl, issuers: {} };
  if (!clientInformation && !tokens) return upgrade;
  const issuer =
    discoveryState?.authorizationServerMetadata?.issuer ?? discoveryState?.authorizationServerUrl;
  if (issuer === undefined) return upgrade;
  return {
    ...upgrade,
    issuers: { [issuer]: { clientInformation, tokens, expiresAt } },
    current: issuer,
  };
}
