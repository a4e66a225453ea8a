import { randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Who may use the console: one-time links, and the browser sessions they open. A link is minted
 * for a caller the HTTP door let in with the bearer token (or, with `httpAuth`, an access token with
 * the admin scope), and `mcpproxy console` opens it. Redeeming it once sets a session cookie
 * (HttpOnly, SameSite=Strict) and gives the session its CSRF token; a second use, or a link older
 * than LINK_TTL_MS, opens nothing. Everything is held in memory: a restarted proxy asks for a new link.
 */
export interface ConsoleSession {
  id: string;
  /** Sent back with every state change (a hidden field), compared in constant time. */
  csrf: string;
  /** Who minted the link the session came from, as the log says it. */
  by: string;
  expiresAt: number;
}

export interface ConsoleSessions {
  /** A new one-time code for a login link. */
  mintLink(by: string): string;
  /** The session a code opens, once; undefined for an unknown, used or expired code. */
  redeem(code: string): ConsoleSession | undefined;
  /** The live session of a cookie's value. */
  sessionOf(id: string | undefined): ConsoleSession | undefined;
  end(id: string): void;
}

/** A login link is for the next minute or two, not for a bookmark. */
export const LINK_TTL_MS = 2 * 60_000;
/** A session lasts a working day; the console is opened again with `mcpproxy console`. */
export const SESSION_TTL_MS = 12 * 60 * 60_000;
/** Bounds: links and sessions nobody used do not pile up. */
const MAX_LINKS = 64;
const MAX_SESSIONS = 64;

const secret = () => randomBytes(32).toString("base64url");

export function createConsoleSessions(now: () => number = Date.now): ConsoleSessions {
  const links = new Map<string, { by: string; expiresAt: number }>();
  const sessions = new Map<string, ConsoleSession>();
  const sweep = () => {
    const at = now();
    for (const [code, link] of links) if (link.expiresAt <= at) links.delete(code);
    for (const [id, session] of sessions) if (session.expiresAt <= at) sessions.delete(id);
  };
  // Maps keep their insertion order: the oldest go first.
  const bound = <T>(map: Map<string, T>, max: number) => {
    while (map.size > max) map.delete(map.keys().next().value as string);
  };
  return {
    mintLink(by) {
      sweep();
      const code = secret();
      links.set(code, { by, expiresAt: now() + LINK_TTL_MS });
      bound(links, MAX_LINKS);
      return code;
    },
    redeem(code) {
      sweep();
      const link = links.get(code);
      if (!link) return undefined;
      links.delete(code);
      const session = { id: secret(), csrf: secret(), by: link.by, expiresAt: now() + SESSION_TTL_MS };
      sessions.set(session.id, session);
      bound(sessions, MAX_SESSIONS);
      return session;
    },
    sessionOf(id) {
      if (!id) return undefined;
      const session = sessions.get(id);
      if (!session) return undefined;
      if (session.expiresAt <= now()) {
        sessions.delete(id);
        return undefined;
      }
      return session;
    },
    end(id) {
      sessions.delete(id);
    },
  };
}

/** Whether `given` is the session's CSRF token (constant time). */
export function isCsrfToken(session: ConsoleSession, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}
