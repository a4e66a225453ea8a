import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type {
  OAuthClientInformationMixed,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import { writeFileAtomicSync } from "../index/atomic-file.ts";

/**
 * What mcpproxy keeps of one remote server's OAuth login, in `<data dir>/oauth/<server>-<hash>.json`
 * (0600, directory 0700): the client registration, the tokens with when they expire, and the
 * discovered metadata. Bound to the server's URL: a server whose URL changed starts over. Tokens
 * are never logged; `mcpproxy auth status` shows only whether they exist and when they expire.
 */
export interface OAuthRecord {
  serverUrl: string;
  clientInformation?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the access token expires (ms since the epoch), from `expires_in` at the time it was saved. */
  expiresAt?: number;
  /** How long the access token was valid for when issued (ms). */
  lifetimeMs?: number;
  discoveryState?: OAuthDiscoveryState;
}

export interface OAuthStore {
  readonly path: string;
  load(): OAuthRecord;
  update(change: (record: OAuthRecord) => OAuthRecord): OAuthRecord;
  clear(): boolean;
}

export function oauthDir(dataDir: string): string {
  return join(dataDir, "oauth");
}

/** A file name for the server that no name can escape from, unique per name. */
function fileNameOf(server: string): string {
  const safe = server.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 60);
  return `${safe}-${createHash("sha256").update(server).digest("hex").slice(0, 8)}.json`;
}

export function openOAuthStore(dataDir: string, server: string, serverUrl: string): OAuthStore {
  const path = join(oauthDir(dataDir), fileNameOf(server));
  const empty = (): OAuthRecord => ({ serverUrl });
  const load = (): OAuthRecord => {
    if (!existsSync(path)) return empty();
    try {
      const record = JSON.parse(readFileSync(path, "utf8")) as OAuthRecord;
      return record.serverUrl === serverUrl ? record : empty();
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
