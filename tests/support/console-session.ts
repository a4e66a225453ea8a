import { expect } from "bun:test";
import { runCli } from "../helpers.ts";

/**
 * A console session as a browser gets one: `mcpproxy console --no-open` (with these flags) prints a
 * one-time link, the link sets the session cookie, and the page holds the CSRF token; `post` sends
 * a form as the console's own page does (this origin, the token).
 */
export async function consoleSession(flags: string[], env: Record<string, string>) {
  const opened = await runCli(["console", "--no-open", ...flags], env);
  expect(opened.code).toBe(0);
  const link = /(http:\/\/\S+\/console\/login\?code=\S+)/.exec(opened.stdout)?.[1];
  expect(link).toBeDefined();
  const origin = new URL(link!).origin;
  const login = await fetch(link!, { redirect: "manual" });
  expect(login.status).toBe(303);
  const setCookie = login.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0]!;
  const page = await (await fetch(`${origin}/`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${origin}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, csrf }),
    });
  return { link: link!, origin, setCookie, cookie, csrf, page, post };
}
