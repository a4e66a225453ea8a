import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { openBrowser } from "../open-browser.ts";
import { createConsoleClient } from "./console-client.ts";
import { extractHelper } from "./helper-binary.ts";
import { notify } from "./notify.ts";
import { helperLibraries, startHelper } from "./tray-helper.ts";
import { takeTrayLock } from "./tray-lock.ts";
import { type TrayState, trayMenu } from "./tray-menu.ts";

/**
 * The tray of the background service (`mcpproxy tray`, started by the service when
 * `mcpproxy.tray` is on or with `mcpproxy start --tray`): it reads the service's state every
 * POLL_MS through the console (console-client.ts), redraws the icon and menu when it changed, says
 * so with a notification when something new waits for approval, and does what a click asks. With
 * no desktop, no helper for the system or no indicator library, it says so once and ends with 0:
 * the service never fails for its tray. It ends when the service does.
 */
export interface TrayOptions {
  dataDir: string;
  logger: Logger;
  /** The service's origin and token, read again when it restarts (service-files.ts). */
  service: () => Promise<{ origin: string; token: string } | undefined>;
  env?: NodeJS.ProcessEnv;
}

const POLL_MS = 2_000;
/** Polls without an answer after which the service is taken as gone and the tray ends. */
const GONE_AFTER = 15;

export async function runTray(options: TrayOptions): Promise<number> {
  const { logger } = options;
  const env = options.env ?? process.env;
  if (process.platform === "linux" && !env.DISPLAY && !env.WAYLAND_DISPLAY) {
    logger.info("tray: no desktop here (neither DISPLAY nor WAYLAND_DISPLAY is set): the tray is not shown");
    return 0;
  }
  const lock = takeTrayLock(options.dataDir);
  if (!lock) {
    logger.info("tray: another tray already shows this service");
    return 0;
  }
  try {
    return await showTray(options, env);
  } finally {
    lock.release();
  }
}

async function showTray(options: TrayOptions, env: NodeJS.ProcessEnv): Promise<number> {
  const { logger } = options;
  const helperPath = await extractHelper(options.dataDir).catch((error: unknown) => {
    logger.warn(`tray: the tray helper could not be written to the data dir: ${describeError(error)}`);
    return undefined;
  });
  if (!helperPath) {
    logger.info(`tray: this binary has no tray helper for ${process.platform}: the tray is not shown`);
    return 0;
  }
  const libraries = helperLibraries(helperPath);
  if ("missing" in libraries) {
    logger.warn(`tray: ${libraries.missing}; the tray is not shown`);
    return 0;
  }
  let service = await waitForService(options);
  if (!service) {
    logger.info("tray: no mcpproxy service runs for this data dir (start one with `mcpproxy start`)");
    return 0;
  }
  let client = createConsoleClient(service.origin, service.token);
  let shown = "";
  let lastWaiting = 0;
  let misses = 0;
  let stopping = false;

  const act = async (what: string, work: () => Promise<unknown>) => {
    try {
      await work();
      await refresh();
    } catch (error) {
      logger.warn(`tray: ${what}: ${describeError(error)}`);
    }
  };
  const open = (next?: string) =>
    act("opening the console", async () => {
      const url = await client.link(next);
      // The link signs in whoever has it: it goes to a browser, never to the log.
      if (!(await openBrowser(url, env)))
        logger.info("tray: no browser could be opened here: run `mcpproxy console` in a terminal");
    });
  const helper = startHelper(
    helperPath,
    libraries.env,
    (id) => {
      const [verb, name = ""] = id.split(/:(.*)/s);
      if (verb === "console") void open();
      else if (verb === "approvals") void open("/console/approvals");
      else if (verb === "enable" || verb === "disable")
        void act(`${verb} ${name}`, () => client.act("/console/servers", { operation: verb, name }));
      else if (verb === "pause" || verb === "resume")
        void act(verb, () => client.act("/console/pause", { paused: verb === "pause" ? "1" : "0" }));
      else if (verb === "quit") {
        stopping = true;
        void act("stopping the service", () => client.act("/console/stop", {})).finally(() => helper.close());
      }
    },
    (line) => logger.debug(`tray helper: ${line}`),
  );

  async function refresh(): Promise<void> {
    let state: TrayState;
    try {
      state = await client.state();
      misses = 0;
    } catch {
      misses++;
      state = { waiting: 0, paused: false };
      // A restarted service has a new port or token: find it again.
      const again = await options.service();
      if (again && (again.origin !== service?.origin || again.token !== service.token)) {
        service = again;
        client = createConsoleClient(again.origin, again.token);
      }
    }
    const menu = trayMenu(state);
    const key = JSON.stringify(menu);
    if (key !== shown) {
      shown = key;
      helper.show(menu);
    }
    if (state.waiting > lastWaiting)
      notify("mcpproxy", `${state.waiting} waiting for your approval: open the console to review`);
    lastWaiting = state.waiting;
  }

  await refresh();
  logger.info(`tray: shown for the service at ${service.origin}`);
  const timer = setInterval(() => {
    if (misses >= GONE_AFTER) helper.close();
    else void refresh();
  }, POLL_MS);
  const end = () => helper.close();
  process.once("SIGTERM", end);
  process.once("SIGINT", end);
  const why = await helper.ended;
  clearInterval(timer);
  if (!stopping && misses < GONE_AFTER && !why.includes("exit code 0")) logger.warn(`tray: ${why}`);
  return 0;
}

/** The service, waited for a little (the service starts its tray before it listens). */
async function waitForService(options: TrayOptions) {
  for (let i = 0; i < 60; i++) {
    const found = await options.service();
    if (found) return found;
    await Bun.sleep(500);
  }
  return undefined;
}
