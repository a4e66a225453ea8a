import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COLOURS } from "../src/tray/tray-menu.ts";
import {
  createSandbox,
  eventually,
  fixtureEntry,
  processesMatching,
  runCli,
  type Sandbox,
} from "./helpers.ts";
import { consoleSession } from "./support/console-session.ts";
import { pixelsOf, startXScreen, X_MISSING, type XScreen } from "./support/x-screen.ts";

// A loaded 2-core machine can be slow without anything being wrong: generous bounds.
setDefaultTimeout(120_000);

/**
 * The service's tray through the compiled binary, on a virtual X screen with a tray host (Debian's
 * xvfb, trayer and x11-apps; skipped with a message where they are missing, and CI installs them):
 * `mcpproxy start --tray` shows the icon in the state's colour, it follows the service (paused from
 * the console: grey), and `mcpproxy stop` takes it away. Also the console's log tail, which the
 * service's log feeds, and `mcpproxy console` finding the service by itself. Screenshots go to
 * MCPPROXY_CONSOLE_SHOTS when it is set.
 */
const hasIndicator = [
  "/usr/lib/x86_64-linux-gnu",
  "/usr/lib/aarch64-linux-gnu",
  "/usr/lib64",
  "/usr/lib",
].some(
  (dir) =>
    existsSync(join(dir, "libayatana-appindicator3.so.1")) || existsSync(join(dir, "libappindicator3.so.1")),
);
const missing = [...X_MISSING, ...(hasIndicator ? [] : ["libayatana-appindicator3-1"])];
const canShow = process.platform === "linux" && missing.length === 0;
if (!canShow)
  process.stderr.write(
    `skipping the tray's screen test: ${process.platform !== "linux" ? "not Linux" : `missing ${missing.join(", ")}`} ` +
      "(Debian: apt-get install xvfb trayer x11-apps libayatana-appindicator3-1)\n",
  );

let sandbox: Sandbox;
let screen: XScreen | undefined;
const shots = process.env.MCPPROXY_CONSOLE_SHOTS || "";

const cli = (env: Record<string, string>, ...args: string[]) =>
  runCli([...args, "--config", sandbox.configPath, "--data-dir", sandbox.dataDir], sandbox.env(env));

beforeAll(async () => {
  sandbox = createSandbox();
  sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
  if (canShow) screen = await startXScreen();
});
afterAll(async () => {
  await cli({}, "stop");
  screen?.stop();
  sandbox?.cleanup();
});

/** Signs in to the service's console as `mcpproxy console` does, with no --url: it finds the service. */
const signIn = () =>
  consoleSession(["--config", sandbox.configPath, "--data-dir", sandbox.dataDir], sandbox.env());

describe("the service's console and tray", () => {
  test("the console of the service: found by `mcpproxy console`, its log followed live", async () => {
    const env: Record<string, string> = screen ? { DISPLAY: screen.display } : {};
    const started = await cli(env, "start", ...(canShow ? ["--tray"] : []));
    expect(started.code).toBe(0);
    // Where there is no desktop the tray says so and ends well; the service is not its concern.
    const headless = await cli({}, "tray");
    expect(headless.code).toBe(0);
    expect(headless.stderr).toContain("no desktop here");
    const { origin, cookie } = await signIn();
    const log = await (await fetch(`${origin}/console/activity/log`, { headers: { cookie } })).text();
    expect(log).toContain("serving MCP at");
    expect(log).toContain("console: signed in");
    // The activity view follows it.
    expect(await (await fetch(`${origin}/console/activity`, { headers: { cookie } })).text()).toContain(
      'data-refresh="/console/activity/log"',
    );
  });

  test.skipIf(!canShow)(
    "the tray shows the state's colour, follows a pause, and goes with the service",
    async () => {
      const logPath = join(sandbox.dataDir, "service.log");
      await eventually(
        () => (existsSync(logPath) ? readFileSync(logPath, "utf8") : ""),
        (text) => text.includes("tray: shown for the service"),
        60_000,
      );
      // A second tray for the same service (start --tray beside one already shown) says so and ends.
      expect((await cli({ DISPLAY: screen!.display }, "start", "--tray")).code).toBe(0);
      await eventually(
        () => readFileSync(logPath, "utf8"),
        (text) => text.includes("another tray already shows this service"),
        30_000,
      );
      expect(processesMatching("tray_linux_release").length).toBe(1);
      const connected = await eventually(
        () => screen!.shot(),
        (shot) => pixelsOf(shot.rgb, COLOURS.connected) > 30,
        30_000,
      );
      expect(pixelsOf(connected.rgb, COLOURS.connected)).toBeGreaterThan(30);
      if (shots) {
        mkdirSync(shots, { recursive: true });
        writeFileSync(join(shots, "tray-connected.png"), connected.png);
      }

      const { post } = await signIn();
      expect((await post("/console/pause", { paused: "1" })).status).toBe(303);
      const paused = await eventually(
        () => screen!.shot(),
        (shot) => pixelsOf(shot.rgb, COLOURS.paused) > 30,
        30_000,
      );
      expect(pixelsOf(paused.rgb, COLOURS.connected)).toBe(0);
      if (shots) writeFileSync(join(shots, "tray-paused.png"), paused.png);
      expect((await post("/console/pause", { paused: "0" })).status).toBe(303);

      expect((await cli({}, "stop")).code).toBe(0);
      const gone = await eventually(
        () => processesMatching(sandbox.dataDir).length,
        (n) => n === 0,
        30_000,
      );
      expect(gone).toBe(0);
      const after = await eventually(
        () => screen!.shot(),
        (shot) => pixelsOf(shot.rgb, COLOURS.connected) + pixelsOf(shot.rgb, COLOURS.paused) === 0,
        30_000,
      );
      expect(pixelsOf(after.rgb, COLOURS.paused)).toBe(0);
    },
  );
});
