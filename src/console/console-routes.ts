import type { Context, Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { count, namesOf } from "../approvals/approval-choice.ts";
import { escapeUnshown } from "../security/hidden-characters.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import { activityView, startActivitySamples } from "./activity-view.ts";
import { approvalsView } from "./approvals-view.ts";
import { mountActions } from "./console-actions.ts";
import { CONSOLE_CSS, CONSOLE_ICON, CONSOLE_JS } from "./console-assets.ts";
import {
  type ConsoleTab,
  consolePage,
  html,
  postForm,
  SECURITY_HEADERS,
  signInPage,
} from "./console-html.ts";
import { type ConsoleSession, createConsoleSessions, isCsrfToken } from "./console-sessions.ts";
import type { ConsoleSources } from "./console-sources.ts";
import { searchView } from "./search-view.ts";
import { serversView } from "./servers-view.ts";

/**
 * The console: the page at `/` and its views under /console/, beside /mcp on the same listener.
 * The HTTP door (server/transport/http-door.ts) lets a request through to them without the bearer
 * token only as `admits` says: the sign-in page, the login link, the assets, and requests that
 * carry a live session cookie. A session comes only from a one-time link, minted by a caller the
 * door let in with the token (or, with `httpAuth`, an access token with the admin scope). Every
 * state change is a POST with the session's CSRF token whose Origin is this listener's own (another
 * port on 127.0.0.1 is another origin, and SameSite does not tell them apart).
 */
export interface Console {
  /** Installs the routes; call before the status routes (a request to `/` with a token falls through to them). */
  mount(app: Hono, door: ConsoleDoor): void;
  /** Whether the door lets `request` through without the token, the console checking it itself. */
  admits(request: Request): boolean;
  close(): void;
}

/** What the console asks of the door: who minted a link. */
interface ConsoleDoor {
  asksCredentials: boolean;
  authOf(c: Context): { clientId?: string | undefined; scopes?: readonly string[] | undefined } | undefined;
  takesAccessTokens: boolean;
}

/** The scope an access token needs to open the console when `httpAuth` is on. */
export const ADMIN_SCOPE = "mcpproxy:admin";

const cookieName = (request: Request) => `mcpproxy_console_${new URL(request.url).port || "80"}`;
const cookieOf = (request: Request) =>
  request.headers
    .get("cookie")
    ?.split(";")
    .map((part) => part.trim().split("="))
    .find(([name]) => name === cookieName(request))?.[1];

export function createConsole(sources: ConsoleSources): Console {
  const sessions = createConsoleSessions();
  const activity = sources.stats ? startActivitySamples(sources.stats) : undefined;
  const flashes = new WeakMap<ConsoleSession, { text: string; isError?: boolean }>();
  const log = sources.logger;

  const page = async (c: Context, session: ConsoleSession, tab: ConsoleTab, title: string, body: string) => {
    const flash = flashes.get(session);
    flashes.delete(session);
    const waiting = count(await sources.waiting());
    return c.html(
      consolePage({ tab, csrf: session.csrf, waiting, flash }, title, body),
      200,
      SECURITY_HEADERS,
    );
  };
  /**
   * The session of a request, if it came from the console's own origin: a script on another port of
   * 127.0.0.1 sends the cookie too (same site), and its request carries its own Origin.
   */
  const sessionOf = (c: Context) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && origin !== new URL(c.req.url).origin) return undefined;
    return sessions.sessionOf(getCookie(c, cookieName(c.req.raw)));
  };

  /** A state change: a live session, this listener's own Origin, the session's CSRF token. */
  const changing = async (
    c: Context,
  ): Promise<{ session: ConsoleSession; form: Record<string, string> } | Response> => {
    const session = sessionOf(c);
    if (!session) return c.text("Forbidden: sign in with `mcpproxy console` first", 403, SECURITY_HEADERS);
    const origin = c.req.header("origin");
    if (origin !== new URL(c.req.url).origin)
      return c.text("Forbidden: this form was not sent from the console's own page", 403, SECURITY_HEADERS);
    const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const form: Record<string, string> = {};
    for (const [key, value] of Object.entries(body)) if (typeof value === "string") form[key] = value;
    if (!isCsrfToken(session, form.csrf))
      return c.text(
        "Forbidden: the form's token is missing or stale; reload the page",
        403,
        SECURITY_HEADERS,
      );
    return { session, form };
  };
  const done = (c: Context, session: ConsoleSession, back: string, text: string, isError = false) => {
    flashes.set(session, { text, isError });
    return c.redirect(back, 303);
  };

  return {
    admits(request) {
      const path = new URL(request.url).pathname;
      if (path === "/console/login" || path.startsWith("/console/assets/")) return true;
      // `/` without credentials is the sign-in page (or the console, for a session); with a token, the status page.
      if (path === "/") return !request.headers.has("authorization");
      return (
        path.startsWith("/console/") &&
        path !== "/console/link" &&
        sessions.sessionOf(cookieOf(request)) !== undefined
      );
    },

    mount(app, door) {
      app.get("/console/assets/console.css", (c) =>
        c.body(CONSOLE_CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "no-cache" }),
      );
      app.get("/console/assets/icon.svg", (c) =>
        c.body(CONSOLE_ICON, 200, { "content-type": "image/svg+xml", "cache-control": "max-age=86400" }),
      );
      app.get("/console/assets/console.js", (c) =>
        c.body(CONSOLE_JS, 200, {
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": "no-cache",
        }),
      );

      // Minting a link: only for a caller the door let in (the bearer token, or an admin's access token).
      app.post("/console/link", (c) => {
        const auth = door.authOf(c);
        if (door.takesAccessTokens && !auth?.scopes?.includes(ADMIN_SCOPE))
          return c.json(
            { error: `Forbidden: the console needs an access token with the ${ADMIN_SCOPE} scope` },
            403,
          );
        const by = auth?.clientId ?? "a local caller";
        const code = sessions.mintLink(by);
        log.info(`console: a sign-in link was made for ${by}`);
        return c.json({ url: `${new URL(c.req.url).origin}/console/login?code=${code}` });
      });

      app.get("/console/login", (c) => {
        const session = sessions.redeem(c.req.query("code") ?? "");
        if (!session)
          return c.html(
            signInPage(
              "This sign-in link was used already, or has expired. Run `mcpproxy console` for a new one.",
            ),
            403,
            SECURITY_HEADERS,
          );
        setCookie(c, cookieName(c.req.raw), session.id, {
          httpOnly: true,
          sameSite: "Strict",
          path: "/",
          secure: new URL(c.req.url).protocol === "https:",
          maxAge: Math.floor((session.expiresAt - Date.now()) / 1000),
        });
        log.info(`console: signed in (link made for ${session.by})`);
        // Only a view of the console itself: a link is never a way to send a browser elsewhere.
        const next = c.req.query("next") ?? "";
        return c.redirect(/^\/console\/(approvals|search|activity)$/.test(next) ? next : "/", 303);
      });

      app.get("/", async (c, next) => {
        const session = sessionOf(c);
        if (!session) {
          // The read-only status page: for a caller with the token, and for anyone where the door asks
          // for nothing (a loopback serve without a token, whose /mcp is as open).
          if (c.req.header("authorization") || !door.asksCredentials) return next();
          return c.html(signInPage(), 401, SECURITY_HEADERS);
        }
        const rows = sources.servers().map((status) => ({ status, hint: sources.hintFor(status) }));
        return page(
          c,
          session,
          "servers",
          "Servers",
          pausedBanner(session.csrf, sources.isPaused()) +
            serversView(rows, sources.stats?.() ?? [], {
              csrf: session.csrf,
              canEdit: sources.editor !== undefined,
              indexedTools: sources.catalog.size(),
            }),
        );
      });

      app.get("/console/approvals", async (c) => {
        const session = sessionOf(c);
        if (!session) return c.html(signInPage(), 401, SECURITY_HEADERS);
        return page(
          c,
          session,
          "approvals",
          "Approvals",
          approvalsView(await sources.waiting(), session.csrf, sources.editor !== undefined),
        );
      });

      app.get("/console/search", async (c) => {
        const session = sessionOf(c);
        if (!session) return c.html(signInPage(), 401, SECURITY_HEADERS);
        const query = c.req.query("q") ?? "";
        const profile = c.req.query("profile") ?? "";
        const search = sources.searches.get(profile);
        const result = query.trim() && search ? await search(query) : undefined;
        const profiles = [...sources.searches.keys()].filter((name) => name !== "");
        return page(c, session, "search", "Search", searchView(query, profile, profiles, result));
      });

      app.get("/console/activity", async (c) => {
        const session = sessionOf(c);
        if (!session) return c.html(signInPage(), 401, SECURITY_HEADERS);
        const view = activityView(
          sources.stats?.() ?? [],
          activity?.samples() ?? [],
          sources.logTail !== undefined,
        );
        return page(c, session, "activity", "Activity", view);
      });

      app.get("/console/activity/log", async (c) => {
        if (!sessionOf(c)) return c.text("Forbidden", 403, SECURITY_HEADERS);
        const lines = (await sources.logTail?.(200)) ?? [];
        const text = lines.map((line) => escapeUnshown(redactSecrets(line))).join("\n");
        return c.html(html(text), 200, SECURITY_HEADERS);
      });

      // What the tray reads (tray/): the servers' states, what waits, whether calls are paused.
      app.get("/console/state.json", async (c) => {
        if (!sessionOf(c)) return c.json({ error: "Forbidden" }, 403, SECURITY_HEADERS);
        const waiting = await sources.waiting();
        return c.json(
          {
            servers: sources.servers().map(({ name, state, toolCount }) => ({ name, state, toolCount })),
            waiting: count(waiting),
            waitingNames: namesOf(waiting),
            paused: sources.isPaused(),
          },
          200,
          SECURITY_HEADERS,
        );
      });

      app.post("/console/logout", async (c) => {
        const checked = await changing(c);
        if (checked instanceof Response) return checked;
        sessions.end(checked.session.id);
        setCookie(c, cookieName(c.req.raw), "", { httpOnly: true, sameSite: "Strict", path: "/", maxAge: 0 });
        return c.html(signInPage(), 200, SECURITY_HEADERS);
      });

      mountActions(app, { sources, changing, done, log });
    },

    close() {
      activity?.stop();
    },
  };
}

/** Pause or resume the calls: said at the top of the Servers view while paused. */
function pausedBanner(csrf: string, isPaused: boolean): string {
  const button = postForm(
    csrf,
    "/console/pause",
    { paused: isPaused ? "0" : "1" },
    `<button type="submit"${isPaused ? ' class="primary"' : ""}>${isPaused ? "Resume calls" : "Pause calls"}</button>`,
  );
  return isPaused
    ? `<p class="flash flash-error" id="paused">Paused: every call is refused (servers keep running). ${button}</p>`
    : `<p class="actions" id="pause">${button} <span class="meta">Stop answering calls without stopping the servers.</span></p>`;
}
