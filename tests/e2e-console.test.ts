import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Browser, chromium as playwright } from "playwright-core";
import {
  createSandbox,
  eventually,
  FIXTURE,
  fixtureEntry,
  runCli,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";
import { consoleSession } from "./support/console-session.ts";

// A loaded 2-core machine can be slow without anything being wrong: generous bounds, not 5 s.
setDefaultTimeout(120_000);

/**
 * The console through the compiled binary (`serve --transport http` with the bearer token): what a
 * visitor without a session gets, the one-time link, the checks on every state change (a session,
 * this listener's Origin, the CSRF token), and a person's whole round in real headless Chromium
 * (Debian's `chromium`, driven by playwright-core; skipped with a message where it is missing):
 * sign in, read the servers, approve an agent's server and a changed tool after reading its diff,
 * deny another, disable and enable a server, search, and watch the calls in the activity.
 * Screenshots go to MCPPROXY_CONSOLE_SHOTS when it is set (the sandbox otherwise).
 */
const chromiumPath = Bun.which("chromium") ?? Bun.which("chromium-browser");
if (!chromiumPath)
  process.stderr.write(
    "skipping the console's browser tests: chromium is not installed (Debian: apt-get install chromium)\n",
  );

const HOSTILE = "<script>alert('console')</script><img src=x onerror=alert(1)>";

let sandbox: Sandbox;
let proxy: Awaited<ReturnType<typeof startHttpProxy>>;
let origin: string;
let token: string;
let agent: Client;

const flags = () => ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
const call = (name: string, args: Record<string, unknown> = {}) =>
  agent.callTool({ name: "call_tool", arguments: { name, arguments: args } });

/** A console session, as `mcpproxy console` opens one (tests/support/console-session.ts). */
const signIn = () => consoleSession([...flags(), "--url", origin], sandbox.env());

/** A one-time sign-in link, as `mcpproxy console` asks for it. */
async function signInLink(): Promise<string> {
  const result = await runCli(["console", "--no-open", ...flags(), "--url", origin], sandbox.env());
  expect(result.code).toBe(0);
  return /(http:\/\/\S+\/console\/login\?code=\S+)/.exec(result.stdout)![1]!;
}

/** Signs in without a browser: the session cookie the link sets. */
async function sessionCookie(): Promise<string> {
  const { setCookie, cookie } = await signIn();
  expect(setCookie).toMatch(/HttpOnly/i);
  expect(setCookie).toMatch(/SameSite=Strict/i);
  return cookie;
}

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";

beforeAll(async () => {
  sandbox = createSandbox();
  // A comment of the person's, which the console's edits keep.
  writeFileSync(
    sandbox.configPath,
    `// my servers\n${JSON.stringify({ mcpServers: { fx: fixtureEntry() } }, null, 2)}\n`,
  );
  proxy = await startHttpProxy(sandbox, [], { MCPPROXY_REQUIRE_TOKEN: "1" });
  origin = proxy.url.origin;
  token = readFileSync(join(sandbox.dataDir, "http-token"), "utf8").trim();
  agent = new Client({ name: "agent", version: "1.0.0" });
  await agent.connect(
    new StreamableHTTPClientTransport(proxy.url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  await eventually(
    () => call("fx__echo", { message: "hello" }),
    (result) => !result.isError,
    30_000,
  );
  // An agent adds two servers (held until a person approves), and a tool changes under the proxy.
  for (const name of ["agentfx", "unwanted"])
    await agent.callTool({
      name: "upstream_servers",
      arguments: { operation: "add", name, server: fixtureEntry() },
    });
  await call("fx__rewrite_tool", { tool_name: "echo", description: `Echo back the message. ${HOSTILE}` });
  await eventually(
    () => call("fx__echo", { message: "again" }),
    (result) => Boolean(result.isError),
    15_000,
  );
}, 120_000);

afterAll(async () => {
  await agent?.close();
  await proxy?.stop();
  sandbox?.cleanup();
});

describe("the console's door", () => {
  test("without a session, / is a sign-in page that shows nothing of the proxy", async () => {
    const answer = await fetch(`${origin}/`);
    expect(answer.status).toBe(401);
    const page = await answer.text();
    expect(page).toContain("mcpproxy console");
    expect(page).not.toContain("fx");
    expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'");
    // The views and the actions too.
    for (const path of ["/console/approvals", "/console/search?q=echo", "/console/activity"])
      expect((await fetch(`${origin}${path}`)).status).toBe(401);
  });

  test("a link is made only for the token's holder, and opens one session, once", async () => {
    expect((await fetch(`${origin}/console/link`, { method: "POST" })).status).toBe(401);
    const link = await signInLink();
    expect((await fetch(link, { redirect: "manual" })).status).toBe(303);
    const again = await fetch(link, { redirect: "manual" });
    expect(again.status).toBe(403);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await again.text()).toContain("used already");
    expect((await fetch(`${origin}/console/login?code=guessed`, { redirect: "manual" })).status).toBe(403);
  });

  test("a state change needs the session, this listener's Origin and the CSRF token", async () => {
    const cookie = await sessionCookie();
    const page = await (await fetch(`${origin}/`, { headers: { cookie } })).text();
    expect(page).toContain('data-server="fx"');
    const csrf = csrfOf(page);
    expect(csrf.length).toBeGreaterThan(20);
    const disable = (headers: Record<string, string>, body: Record<string, string>) =>
      fetch(`${origin}/console/servers`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ operation: "disable", name: "fx", ...body }),
      });
    // Another port on 127.0.0.1 is another origin (SameSite would let its request carry the cookie).
    expect((await disable({ cookie, origin: "http://127.0.0.1:1" }, { csrf })).status).toBe(403);
    expect((await disable({ cookie }, { csrf })).status).toBe(403); // no Origin at all
    expect((await disable({ cookie, origin }, {})).status).toBe(403); // no CSRF token
    expect((await disable({ cookie, origin }, { csrf: `${csrf}x` })).status).toBe(403);
    // The agent's credentials (the bearer token its client sends) are not a session.
    expect((await disable({ authorization: `Bearer ${token}`, origin }, { csrf })).status).toBe(403);
    // A foreign site is refused by the host guard before anything.
    expect((await disable({ cookie, origin: "http://evil.example" }, { csrf })).status).toBe(403);
    // Another port's script sends the cookie too (same site): it reads nothing.
    const foreign = await fetch(`${origin}/console/state.json`, {
      headers: { cookie, origin: "http://127.0.0.1:1" },
    });
    expect(foreign.status).toBe(403);
    expect((await fetch(`${origin}/console/state.json`, { headers: { cookie } })).status).toBe(200);
    // The cookie is no key to /mcp.
    const mcp = await fetch(proxy.url, {
      method: "POST",
      headers: { cookie, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(401);
    // Nothing was disabled.
    expect(readFileSync(sandbox.configPath, "utf8")).not.toContain('"disabled"');
  });

  test("what upstreams and agents wrote is shown escaped, never run", async () => {
    const cookie = await sessionCookie();
    const page = await (await fetch(`${origin}/console/approvals`, { headers: { cookie } })).text();
    expect(page).toContain("fx/echo");
    expect(page).not.toContain("<script>alert");
    expect(page).not.toContain("<img src=x");
    expect(page).toContain("&#60;script&#62;");
    // A server's error too: one whose command cannot run says so, escaped.
    const csrf = csrfOf(page);
    const form = (path: string, fields: Record<string, string>) =>
      fetch(`${origin}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf, ...fields }),
      });
    expect(
      (await form("/console/servers/add", { name: "broken", command: "/no/such/<script>alert(2)</script>" }))
        .status,
    ).toBe(303);
    const servers = await eventually(
      async () => (await fetch(`${origin}/`, { headers: { cookie } })).text(),
      (text) =>
        text.includes('<tr data-server="broken"><th scope="row">broken</th><td class="state state-failed">'),
      30_000,
    );
    expect(servers).toContain("&#60;script&#62;alert(2)");
    expect(servers).not.toContain("<script>alert(2)");
    expect((await form("/console/servers", { operation: "remove", name: "broken" })).status).toBe(303);
  });
});

describe.skipIf(!chromiumPath)("a person's round in Chromium", () => {
  let browser: Browser;
  const shots = process.env.MCPPROXY_CONSOLE_SHOTS || join(createSandbox().dir, "shots");
  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    browser = await playwright.launch({
      executablePath: chromiumPath!,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  test("sign in, approve, deny, disable and enable, search, and watch the activity", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const failures: string[] = [];
    page.on("pageerror", (error) => failures.push(String(error)));
    page.on("dialog", (dialog) => void dialog.accept());
    const tab = (name: string | RegExp) =>
      page.getByRole("navigation", { name: "console" }).getByRole("link", { name });
    const countAfterReload = async (selector: string) => {
      await page.reload();
      return page.locator(selector).count();
    };
    const requests: string[] = [];
    page.on("request", (request) => requests.push(request.url()));

    await page.goto(await signInLink());
    expect(new URL(page.url()).pathname).toBe("/");
    await page.locator('tr[data-server="fx"] .state-connected').waitFor();
    await page.screenshot({ path: join(shots, "servers.png"), fullPage: true });

    // Keyboard alone: Tab reaches the navigation in order, Enter follows it.
    const focusedText = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? "");
    for (let i = 0; i < 10 && !(await focusedText()).startsWith("Approvals"); i++)
      await page.keyboard.press("Tab");
    expect(await focusedText()).toStartWith("Approvals");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/approvals$/);

    // Approvals: the agent's server with its launch spec, the changed tool with its diff and findings.
    await page.locator('[data-item="agentfx"]').waitFor();
    expect(await page.locator('[data-item="agentfx"] pre').innerText()).toContain("runs:");
    const changed = page.locator('[data-item="fx/echo"]');
    expect(await changed.locator(".diff-add").first().innerText()).toContain(
      "<script>alert('console')</script>",
    );
    await page.screenshot({ path: join(shots, "approvals.png"), fullPage: true });

    await page.getByRole("button", { name: "Approve agentfx" }).click();
    await page.locator(".flash").waitFor();
    expect(await page.locator(".flash").innerText()).toContain("Approved agentfx");
    await page.getByRole("button", { name: "Deny unwanted" }).click();
    expect(await page.locator(".flash").innerText()).toContain("unwanted was removed");
    await page.getByRole("button", { name: "Approve fx/echo" }).click();
    expect(await page.locator(".flash").innerText()).toContain("Approved fx/echo");
    expect(await page.locator('[data-item="fx/echo"]').count()).toBe(0);
    const config = JSON.parse(readFileSync(sandbox.configPath, "utf8").replace(/^\/\/.*$/m, ""));
    expect(Object.keys(config.mcpServers).sort()).toEqual(["agentfx", "fx"]);
    expect(config.mcpServers.agentfx.approved).toBeDefined();
    // The approved tool answers the agent again.
    const back = await eventually(
      () => call("fx__echo", { message: "back" }),
      (result) => !result.isError,
      15_000,
    );
    expect(back.content).toEqual([{ type: "text", text: "fixture echo: back" }]);

    // Disable, then enable, a server.
    await tab("Servers").click();
    await page.getByRole("button", { name: "Disable fx" }).click();
    expect(await page.locator(".flash").innerText()).toContain("fx: disabled");
    await page.locator('tr[data-server="fx"] .state-disabled').waitFor();
    await page.getByRole("button", { name: "Enable fx" }).click();
    expect(await page.locator(".flash").innerText()).toContain("fx: enabled");
    await eventually(
      () => countAfterReload('tr[data-server="fx"] .state-connected'),
      (n) => n === 1,
      30_000,
    );

    // Pause: calls are refused, the servers keep running; Resume: they run again.
    await page.getByRole("button", { name: "Pause calls" }).click();
    await page.locator("#paused").waitFor();
    const refused = await call("fx__add_numbers", { a: 1, b: 2 });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("paused by its user");
    await page.getByRole("button", { name: "Resume calls" }).click();
    expect(await page.locator(".flash").innerText()).toContain("Resumed");

    // The restarted fixture lists echo as it was first written, which is not what was approved last:
    // held again (the rug-pull defence does not care which way a tool changes). Approve all of fx.
    await tab(/Approvals/).click();
    await eventually(
      () => countAfterReload('[data-item="fx/echo"]'),
      (n) => n === 1,
      30_000,
    );
    await page.getByRole("button", { name: "Approve all of fx" }).click();
    expect(await page.locator(".flash").innerText()).toContain("Approved fx/echo");

    // Add a server from the form: checked as the config file is, saved with the person's comment kept.
    await tab("Servers").click();
    await page.getByLabel("Name", { exact: true }).fill("added");
    await page.getByLabel("Command (a local server)").fill(process.execPath);
    await page.getByLabel("Arguments, one a line").fill(`${FIXTURE}\n--name\nadded`);
    await page.getByRole("button", { name: "Add", exact: true }).click();
    expect(await page.locator(".flash").innerText()).toContain("Added added");
    await page.screenshot({ path: join(shots, "server-added.png"), fullPage: true });
    const text = readFileSync(sandbox.configPath, "utf8");
    expect(text).toStartWith("// my servers");
    expect(text).toContain('"added"');
    // One that would not load is refused and writes nothing.
    await page.getByLabel("Name", { exact: true }).fill("broken");
    await page.getByLabel("Or a URL (a remote server)").fill("not a url");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    expect(await page.locator(".flash-error").innerText()).toContain("Not added");
    expect(readFileSync(sandbox.configPath, "utf8")).toBe(text);

    // Search: the real retrieve_tools, with why each hit ranked.
    await tab("Search").click();
    await page.getByRole("searchbox", { name: "search tools" }).fill("echo a message back");
    await page.keyboard.press("Enter");
    await page.locator("#results").waitFor();
    const first = page.locator("#results tbody tr").first();
    expect(await first.locator("th").innerText()).toBe("fx__echo");
    expect(await first.locator(".matched").innerText()).toContain("echo");
    await page.screenshot({ path: join(shots, "search.png"), fullPage: true });

    // Activity: the agent's calls, by tool.
    await call("fx__echo", { message: "watched" });
    await tab("Activity").click();
    const echoRow = page.locator("#by-tool tbody tr", { hasText: "echo" }).first();
    expect(Number(await echoRow.locator("td.num").first().innerText())).toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: join(shots, "activity.png"), fullPage: true });

    // A narrow window: every view still fits (tables scroll inside their frame, not the page).
    await page.setViewportSize({ width: 390, height: 800 });
    for (const [name, marker] of [
      ["Activity", "#by-tool"],
      ["Search", "form[role=search]"],
      ["Approvals", "main h1"],
      ["Servers", "#servers"],
    ] as const) {
      await tab(name).click();
      await page.waitForLoadState("load");
      await page.locator(marker).waitFor();
      // Wider than the window, outside the frames that scroll (tables, logs): the page would scroll.
      const wide = await page.evaluate(() =>
        [...document.querySelectorAll("body *")]
          .filter((el) => !el.closest(".table-wrap, pre"))
          .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
          .map((el) => `${el.tagName}.${el.className}`),
      );
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(1);
      expect(`${name}: ${wide.join(" ")}`).toBe(`${name}: `);
    }
    await page.screenshot({ path: join(shots, "servers-narrow.png"), fullPage: true });

    expect(failures).toEqual([]);
    // Nothing was fetched from anywhere but the proxy.
    expect(requests.filter((url) => !url.startsWith(origin))).toEqual([]);
    await context.close();
  });
});

describe("stopping from the console", () => {
  test("ends the proxy as a signal does", async () => {
    const cookie = await sessionCookie();
    const csrf = csrfOf(await (await fetch(`${origin}/`, { headers: { cookie } })).text());
    const stop = await fetch(`${origin}/console/stop`, {
      method: "POST",
      headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf }),
    });
    expect(stop.status).toBe(200);
    expect(await stop.text()).toContain("stopping");
    expect(await proxy.child.exited).toBe(0);
  });
});
