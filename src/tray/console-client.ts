import type { TrayState } from "./tray-menu.ts";

/**
 * The tray's client of the service: it uses the console as a browser does (tray/ talks to the
 * service over HTTP only). It signs in with a one-time link minted with the data dir's token,
 * keeps the session cookie and CSRF token, reads /console/state.json, and posts the console's
 * own forms (with this origin as Origin), so every change passes the same checks as a person's
 * click in the console. A refused request signs in again once.
 */
export interface ConsoleClient {
  state(): Promise<TrayState>;
  act(path: string, fields: Record<string, string>): Promise<void>;
  /** A one-time sign-in link that opens `next` (a console path). */
  link(next?: string): Promise<string>;
}

export function createConsoleClient(origin: string, token: string): ConsoleClient {
  let session: { cookie: string; csrf: string } | undefined;
  const timeout = () => AbortSignal.timeout(10_000);

  const link = async (next?: string) => {
    const answer = await fetch(`${origin}/console/link`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      signal: timeout(),
    });
    if (!answer.ok) throw new Error(`the service refused a sign-in link (HTTP ${answer.status})`);
    const { url } = (await answer.json()) as { url: string };
    return next ? `${url}&next=${encodeURIComponent(next)}` : url;
  };
  const signIn = async () => {
    const login = await fetch(await link(), { redirect: "manual", signal: timeout() });
    const cookie = login.headers.get("set-cookie")?.split(";")[0];
    if (login.status !== 303 || !cookie)
      throw new Error(`signing in to the console failed (HTTP ${login.status})`);
    const page = await (await fetch(`${origin}/`, { headers: { cookie }, signal: timeout() })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
    if (!csrf) throw new Error("the console's page has no form token");
    session = { cookie, csrf };
    return session;
  };
  /** A request with the session, signing in first, and again once if it was refused. */
  const withSession = async (request: (current: { cookie: string; csrf: string }) => Promise<Response>) => {
    let answer = await request(session ?? (await signIn()));
    if (answer.status === 401 || answer.status === 403) answer = await request(await signIn());
    return answer;
  };

  return {
    async state() {
      const answer = await withSession(({ cookie }) =>
        fetch(`${origin}/console/state.json`, { headers: { cookie }, signal: timeout() }),
      );
      if (!answer.ok) throw new Error(`the console's state: HTTP ${answer.status}`);
      return (await answer.json()) as TrayState;
    },
    async act(path, fields) {
      const answer = await withSession(({ cookie, csrf }) =>
        fetch(`${origin}${path}`, {
          method: "POST",
          redirect: "manual",
          headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ ...fields, csrf }),
          signal: timeout(),
        }),
      );
      if (answer.status !== 303 && !answer.ok) throw new Error(`${path}: HTTP ${answer.status}`);
    },
    link,
  };
}
