import type { Context, Hono } from "hono";
import { choose, count, namesOf } from "../approvals/approval-choice.ts";
import { approveChosen } from "../approvals/approve-waiting.ts";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { editsFor } from "../server/tools/upstream-servers-tool.ts";
import { html, narrowPage, SECURITY_HEADERS, signInPage } from "./console-html.ts";
import type { ConsoleSession } from "./console-sessions.ts";
import type { ConsoleSources } from "./console-sources.ts";
import { entriesOfForm } from "./server-form.ts";

/**
 * What the console changes, each a POST checked by `changing` (a live session, this listener's
 * Origin, the session's CSRF token) and answered with a redirect that says what happened: servers
 * enabled, disabled, restarted, removed or added (the server editor `mcpproxy servers` and the
 * agents' tool use, as a person), approvals and denials (the one implementation of
 * `mcpproxy approve`), calls paused or resumed, the proxy stopped. Every decision is logged.
 */
export interface ActionContext {
  sources: ConsoleSources;
  changing(c: Context): Promise<{ session: ConsoleSession; form: Record<string, string> } | Response>;
  done(c: Context, session: ConsoleSession, back: string, text: string, isError?: boolean): Response;
  log: Logger;
}

export function mountActions(app: Hono, { sources, changing, done, log }: ActionContext): void {
  app.post("/console/pause", async (c) => {
    const checked = await changing(c);
    if (checked instanceof Response) return checked;
    const { session, form } = checked;
    const paused = form.paused === "1";
    sources.setPaused(paused);
    log.info(`console: calls ${paused ? "paused" : "resumed"} by ${session.by}`);
    return done(
      c,
      session,
      "/",
      paused ? "Paused: calls are refused until you resume." : "Resumed: calls run again.",
    );
  });

  app.post("/console/stop", async (c) => {
    const checked = await changing(c);
    if (checked instanceof Response) return checked;
    log.info(`console: stopped by ${checked.session.by}`);
    sources.stop();
    return c.html(
      signInPage("mcpproxy is stopping. Start it again with `mcpproxy start`."),
      200,
      SECURITY_HEADERS,
    );
  });

  app.post("/console/servers", async (c) => {
    const checked = await changing(c);
    if (checked instanceof Response) return checked;
    const { session, form } = checked;
    const { operation = "", name = "" } = form;
    const editor = sources.editor;
    if (!editor)
      return done(c, session, "/", "This proxy is read-only: change its servers in the config file.", true);
    try {
      if (operation === "login") {
        // The browser goes to the server's authorization page; the flow ends in the background.
        if (!sources.login) return done(c, session, "/", "Log in with `mcpproxy auth login` here.", true);
        const url = await sources.login(name);
        // The address comes from the server's metadata (an upstream's word): a web page, nothing else.
        if (!/^https?:$/.test(new URL(url).protocol))
          return done(c, session, "/", `${name} gave a sign-in address that is not a web page.`, true);
        log.info(`console: login to ${name} started by ${session.by}`);
        // A link, not a redirect: the console's policy lets its forms lead only to itself.
        return c.html(loginPage(name, url), 200, SECURITY_HEADERS);
      }
      if (operation === "restart") await editor.restart(name);
      else if (["enable", "disable", "remove"].includes(operation))
        await editor.edit((current) => editsFor({ operation, name }, current, "person"));
      else return done(c, session, "/", `Unknown operation ${operation}`, true);
      log.info(`console: ${operation} ${name} by ${session.by}`);
      return done(c, session, "/", `${name}: ${operation === "restart" ? "restarted" : `${operation}d`}.`);
    } catch (error) {
      return done(c, session, "/", `${operation} ${name}: ${describeError(error)}`, true);
    }
  });

  app.post("/console/servers/add", async (c) => {
    const checked = await changing(c);
    if (checked instanceof Response) return checked;
    const { session, form } = checked;
    const editor = sources.editor;
    if (!editor)
      return done(c, session, "/", "This proxy is read-only: change its servers in the config file.", true);
    try {
      const servers = entriesOfForm(form);
      const applied = await editor.edit((current) =>
        editsFor({ operation: "add", servers }, current, "person"),
      );
      const names = Object.keys(servers);
      log.info(`console: added ${names.join(", ")} by ${session.by}`);
      return done(
        c,
        session,
        "/",
        `Added ${names.join(", ")}${applied.added.length === 0 ? " (nothing changed)" : ""}.`,
      );
    } catch (error) {
      return done(c, session, "/", `Not added: ${describeError(error)}`, true);
    }
  });

  app.post("/console/approve", async (c) => {
    const checked = await changing(c);
    if (checked instanceof Response) return checked;
    const { session, form } = checked;
    const target = form.target ?? "";
    const back = "/console/approvals";
    try {
      const waiting = await sources.waiting();
      // One item, named: approved even when flagged (the person read it on the page). A server
      // whole: its flagged items are left, as `mcpproxy approve SERVER` leaves them.
      const { chosen, approved, withheld } = choose(waiting, [target], { all: false, yesFlagged: false });
      if (count(chosen) === 0) return done(c, session, back, `Nothing waits for ${target} any more.`, true);
      await approveChosen(sources.config(), sources.catalog, approved, [target], {
        registry: sources.registry,
        by: `the console (${session.by})`,
        logger: log,
      });
      const left = namesOf(withheld);
      return done(
        c,
        session,
        back,
        `Approved ${namesOf(approved).join(", ") || "nothing"}.${left.length > 0 ? ` Flagged, left for a decision of their own: ${left.join(", ")}.` : ""}`,
      );
    } catch (error) {
      return done(c, session, back, `Approving ${target}: ${describeError(error)}`, true);
    }
  });

  app.post("/console/deny", async (c) => {
    const checked = await changing(c);
    if (checked instanceof Response) return checked;
    const { session, form } = checked;
    const target = form.target ?? "";
    const back = "/console/approvals";
    const editor = sources.editor;
    if (!editor) return done(c, session, back, "This proxy is read-only.", true);
    try {
      const waiting = await sources.waiting();
      if (form.as === "remove") {
        // Only a server an agent added and nobody approved: denying it removes what the agent wrote.
        const launch = waiting.launches.find((item) => item.server === target && item.change === "added");
        if (!launch)
          return done(c, session, back, `${target} does not wait as a server an agent added.`, true);
        await editor.edit((current) => editsFor({ operation: "remove", name: target }, current, "person"));
      } else if (form.as === "disable-server") {
        // A new server held whole: denying it turns it off (a person's disabled), as it was written.
        if (!waiting.servers.includes(target))
          return done(c, session, back, `${target} does not wait as a new server.`, true);
        await editor.edit((current) => editsFor({ operation: "disable", name: target }, current, "person"));
      } else if (form.as === "disable-tool") {
        const tool = waiting.tools.find((item) => `${item.server}/${item.tool}` === target);
        if (!tool) return done(c, session, back, `${target} does not wait for approval.`, true);
        await editor.edit((current) => {
          const entry = current[tool.server] ?? {};
          const disabled = Array.isArray(entry.disabledTools) ? (entry.disabledTools as unknown[]) : [];
          return editsFor(
            {
              operation: "update",
              name: tool.server,
              server: { disabledTools: [...new Set([...disabled, tool.tool])] },
            },
            current,
            "person",
          );
        });
      } else return done(c, session, back, "Unknown decision.", true);
      log.info(`console: denied ${target} by ${session.by}`);
      return done(
        c,
        session,
        back,
        form.as === "remove" ? `Denied: ${target} was removed.` : `Denied: ${target} is disabled.`,
      );
    } catch (error) {
      return done(c, session, back, `Denying ${target}: ${describeError(error)}`, true);
    }
  });
}

/** Where the person continues a login: the server's sign-in page (its host said plainly). */
function loginPage(server: string, url: string): string {
  const host = new URL(url).host;
  return narrowPage(
    "Log in",
    [
      `<h1>Log in to ${html(server)}</h1>`,
      `<p>Continue at ${html(host)}, where ${html(server)} asks you to sign in. mcpproxy waits for it (5 minutes) and connects once you are back.</p>`,
      `<p><a class="button primary" id="continue" href="${html(url)}" rel="noreferrer">Continue to ${html(host)}</a></p>`,
      '<p><a href="/">Back to the console</a></p>',
    ].join(""),
  );
}
