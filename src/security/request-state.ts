import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  randomUUID,
  timingSafeEqual,
} from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "./canonical-json.ts";

/**
 * The `requestState` the proxy hands a 2026-07-28 client with an `input_required` answer (MRTR).
 * The client must send it back unchanged on its retry, and it is attacker-controlled when it comes
 * back, so it is sealed: AES-256-GCM under a key of this data dir, opaque to the client (it may
 * carry the upstream's own state, which is the upstream's business) and bound to what it was
 * minted for: the method, the upstream server, the tool, prompt or resource, a digest of the
 * arguments, the calling principal and an expiry. A state that fails any of these is refused
 * (-32602) before anything is forwarded.
 */
export const REQUEST_STATE_KEY_FILE = "request-state.key";

/** What a state is bound to; a retry must match every field. */
export interface StateBinding {
  method: string;
  server: string;
  /** The upstream tool, prompt or resource URI. */
  target: string;
  /** sha256 of the canonical JSON of the client's arguments (`argumentsDigest`). */
  digest: string;
  /** Who called: a digest of the bearer token over HTTP, or `local` (stdio, no token). */
  principal: string;
}

export interface SealedPayload extends StateBinding {
  /** Expiry, ms since the epoch. */
  exp: number;
  /** The upstream's own requestState (a 2026 upstream), passed back to it on the retry. */
  up?: string | undefined;
  /** A parked call of a 2025 upstream (parked-calls.ts): its id and the round this state answers. */
  park?: { id: string; round: number } | undefined;
}

export interface RequestStateSeal {
  seal(payload: Omit<SealedPayload, "exp">): string;
  /** The payload of a state this proxy sealed and that has not expired; throws otherwise. */
  open(state: string): SealedPayload;
}

const PREFIX = "mcpproxy.1.";
const AAD = Buffer.from("mcpproxy/requestState/v1");
/** A state longer than this was not made here (an upstream's own state is kept small by its server). */
const MAX_STATE_CHARS = 64 * 1024;

/**
 * A seal whose key is read from (or, the first time, written to) `<dataDir>/request-state.key`,
 * 32 random bytes, mode 0600: every proxy on the data dir shares it, so a retry may reach another.
 */
export function createRequestStateSeal(
  /** The data dir whose key file holds the key, or the key itself (a shared store's: shared-store.ts). */
  keySource: string | Buffer,
  ttlMs: number,
  now: () => number = Date.now,
): RequestStateSeal {
  let key: Buffer | undefined = typeof keySource === "string" ? undefined : keySource;
  const keyOf = () => {
    key ??= loadOrCreateStateKey(keySource as string);
    return key;
  };
  return {
    seal(payload) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", keyOf(), iv);
      cipher.setAAD(AAD);
      const body = Buffer.concat([
        cipher.update(JSON.stringify({ ...payload, exp: now() + ttlMs })),
        cipher.final(),
      ]);
      return `${PREFIX}${Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url")}`;
    },
    open(state) {
      if (state.length > MAX_STATE_CHARS || !state.startsWith(PREFIX)) throw new Error("malformed");
      const raw = Buffer.from(state.slice(PREFIX.length), "base64url");
      if (raw.length < 12 + 16 + 2) throw new Error("malformed");
      const decipher = createDecipheriv("aes-256-gcm", keyOf(), raw.subarray(0, 12));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      let text: string;
      try {
        text = Buffer.concat([
          decipher.update(raw.subarray(12, raw.length - 16)),
          decipher.final(),
        ]).toString();
      } catch {
        throw new Error("tampered");
      }
      const payload = JSON.parse(text) as SealedPayload;
      if (typeof payload.exp !== "number" || payload.exp < now()) throw new Error("expired");
      return payload;
    },
  };
}

/** Whether `payload` was minted for `binding` (constant time per field: these come from the client). */
export function isBoundTo(payload: StateBinding, binding: StateBinding): boolean {
  let same = true;
  for (const field of ["method", "server", "target", "digest", "principal"] as const) {
    const a = Buffer.from(String(payload[field]));
    const b = Buffer.from(binding[field]);
    same = a.length === b.length && timingSafeEqual(a, b) && same;
  }
  return same;
}

/** The digest a state binds a request's arguments with: the same value in any key order. */
export function argumentsDigest(value: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(value ?? {}))
    .digest("base64url");
}

/** The key file's 32 bytes, created once (0600) without ever replacing one another process wrote. */
export function loadOrCreateStateKey(dataDir: string): Buffer {
  const path = join(dataDir, REQUEST_STATE_KEY_FILE);
  const existing = readKey(path);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    writeFileSync(temp, randomBytes(32), { mode: 0o600 });
    chmodSync(temp, 0o600);
    // A hard link fails when the key exists: two proxies starting at once keep the first one's.
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  const key = readKey(path);
  if (!key) throw new Error(`${path} does not hold a 32-byte key; remove it and start again`);
  return key;
}

/**
 * The key where the data dir cannot be written (serve on a read-only dir): the key file's when it
 * has one, else a key of this process alone (a requestState it sealed opens only in it).
 */
export function stateKeyToRead(dataDir: string): Buffer {
  try {
    return readKey(join(dataDir, REQUEST_STATE_KEY_FILE)) ?? randomBytes(32);
  } catch {
    return randomBytes(32); // a file it may not read
  }
}

function readKey(path: string): Buffer | undefined {
  try {
    const key = readFileSync(path);
    return key.length >= 32 ? key.subarray(0, 32) : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
