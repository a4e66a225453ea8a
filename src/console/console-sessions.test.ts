import { describe, expect, test } from "bun:test";
import { createConsoleSessions, isCsrfToken, LINK_TTL_MS, SESSION_TTL_MS } from "./console-sessions.ts";

describe("console sessions", () => {
  test("a link opens one session, once, and only while it is fresh", () => {
    let now = 1_000;
    const sessions = createConsoleSessions(() => now);
    const code = sessions.mintLink("bearer:x");
    const session = sessions.redeem(code);
    expect(session?.by).toBe("bearer:x");
    expect(sessions.redeem(code)).toBeUndefined();
    expect(sessions.sessionOf(session!.id)).toBe(session!);
    const late = sessions.mintLink("bearer:x");
    now += LINK_TTL_MS;
    expect(sessions.redeem(late)).toBeUndefined();
    expect(sessions.redeem("guessed")).toBeUndefined();
  });

  test("a session ends when it expires or is ended; unknown ids are nobody", () => {
    let now = 0;
    const sessions = createConsoleSessions(() => now);
    const a = sessions.redeem(sessions.mintLink("a"))!;
    const b = sessions.redeem(sessions.mintLink("b"))!;
    expect(a.id).not.toBe(b.id);
    expect(a.csrf).not.toBe(b.csrf);
    sessions.end(a.id);
    expect(sessions.sessionOf(a.id)).toBeUndefined();
    expect(sessions.sessionOf(undefined)).toBeUndefined();
    now += SESSION_TTL_MS;
    expect(sessions.sessionOf(b.id)).toBeUndefined();
  });

  test("links and sessions nobody used are bounded, the oldest dropped first", () => {
    const sessions = createConsoleSessions();
    const first = sessions.mintLink("x");
    for (let i = 0; i < 100; i++) sessions.mintLink("x");
    expect(sessions.redeem(first)).toBeUndefined();
  });

  test("the CSRF token is compared whole", () => {
    const sessions = createConsoleSessions();
    const session = sessions.redeem(sessions.mintLink("x"))!;
    expect(isCsrfToken(session, session.csrf)).toBe(true);
    expect(isCsrfToken(session, session.csrf.slice(1))).toBe(false);
    expect(isCsrfToken(session, `${session.csrf}a`)).toBe(false);
    expect(isCsrfToken(session, undefined)).toBe(false);
    expect(isCsrfToken(session, ["x"])).toBe(false);
  });
});
