import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  connectHttp,
  createSandbox,
  fixtureEntry,
  runProcess,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * The status page at `/` of the HTTP transport, through the compiled binary: read as plain HTML
 * (it needs no script), and loaded in real headless Chromium (Debian's `chromium` package; the
 * test skips and says so where it is missing, and CI installs it), which runs a search and saves
 * a screenshot that must not be blank.
 */
const chromium = Bun.which("chromium") ?? Bun.which("chromium-browser");
if (!chromium)
  process.stderr.write(
    "skipping the status page's browser test: chromium is not installed (Debian: apt-get install chromium)\n",
  );

/** Distinct byte values in a PNG's decompressed pixel rows: a blank page has a handful. */
function pixelVariety(png: Uint8Array): number {
  const idat: Uint8Array[] = [];
  for (let at = 8; at < png.length; ) {
    const length = new DataView(png.buffer, png.byteOffset + at).getUint32(0);
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
    if (type === "IDAT") idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  return new Set(inflateSync(Buffer.concat(idat))).size;
}

describe("status page", () => {
  let sandbox: Sandbox;
  let proxy: Awaited<ReturnType<typeof startHttpProxy>>;
  let client: Client;

  beforeAll(async () => {
    sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    proxy = await startHttpProxy(sandbox);
    client = await connectHttp(proxy.url);
    await client.callTool({
      name: "call_tool",
      arguments: { name: "fx__echo", arguments: { message: "hi" } },
    });
    await client.callTool({ name: "call_tool", arguments: { name: "fx__always_fails", arguments: {} } });
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    sandbox?.cleanup();
  });

  test("is plain HTML: servers with state, tools used and failing, and a search that shows scores", async () => {
    const page = await (await fetch(new URL("/?q=echo+a+message+back", proxy.url))).text();
    expect(page).toContain("<!doctype html>");
    expect(page).not.toContain("<script");
    expect(page).toMatch(/<td>fx<\/td><td class="state-connected">connected<\/td>/);
    expect(page).toMatch(/<table id="results">.*fx__echo<\/td><td class="score">\d\.\d\d/s);
    expect(page).toMatch(/<table id="failing">.*fx__always_fails/s);
    // What a visitor types is shown escaped, never run.
    const hostile = await (await fetch(new URL("/?q=%3Cscript%3Ealert(1)%3C/script%3E", proxy.url))).text();
    expect(hostile).not.toContain("<script>alert");
    expect(hostile).toContain("&#60;script&#62;");
    // The same guard as /mcp.
    expect(
      (await fetch(new URL("/", proxy.url), { headers: { origin: "http://evil.example" } })).status,
    ).toBe(403);
  });

  test.skipIf(!chromium)(
    "loads in headless Chromium, runs a search, and its screenshot is not blank",
    async () => {
      const url = new URL("/?q=add+two+numbers", proxy.url).href;
      const flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        `--user-data-dir=${join(sandbox.dir, "chromium")}`,
      ];
      const dom = await runProcess([chromium!, ...flags, "--dump-dom", url], sandbox.env());
      expect(dom.stdout).toContain("fx__add_numbers");
      expect(dom.stdout).toMatch(/state-connected/);
      const shot = join(sandbox.dir, "status.png");
      await runProcess(
        [chromium!, ...flags, "--window-size=1200,900", `--screenshot=${shot}`, url],
        sandbox.env(),
      );
      const png = readFileSync(shot);
      expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join("")).toBe("PNG");
      expect(pixelVariety(png)).toBeGreaterThan(20);
    },
    60_000,
  );
});
