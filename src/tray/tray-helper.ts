import { spawn } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { circleIcon } from "./tray-icon.ts";
import { COLOURS, type TrayItem, type TrayMenu } from "./tray-menu.ts";

/**
 * The native helper's side of the tray (systray2's program, helper-binary.ts), over its JSON
 * lines: it says `{"type":"ready"}`, is sent the menu (icon as base64 PNG, tooltip, items each with
 * a numeric `__id`), and says `{"type":"clicked","item":{…}}` for each click; `update-menu` sends
 * a new one and `exit` ends it.
 */
export interface TrayHelper {
  show(menu: TrayMenu): void;
  /** Ends the helper (the icon goes away). */
  close(): void;
  /** Settles when the helper has ended, with why. */
  ended: Promise<string>;
}

interface HelperItem {
  title: string;
  tooltip: string;
  checked: boolean;
  enabled: boolean;
  hidden: boolean;
  items?: HelperItem[];
  __id: number;
}

/**
 * On Linux the helper links libappindicator3.so.1. Debian and Ubuntu ship the compatible
 * Ayatana library under another name: a link to it, in a directory of the helper's own, lets it
 * load. Returns the environment to run it with, or why it cannot run.
 */
export function helperLibraries(helperPath: string): { env: Record<string, string> } | { missing: string } {
  if (process.platform !== "linux") return { env: {} };
  const libs = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
  ];
  if (libs.some((dir) => existsSync(join(dir, "libappindicator3.so.1")))) return { env: {} };
  const ayatana = libs
    .map((dir) => join(dir, "libayatana-appindicator3.so.1"))
    .find((path) => existsSync(path));
  if (!ayatana)
    return {
      missing:
        "the tray needs the app indicator library: install libayatana-appindicator3-1 (Debian, Ubuntu) or libappindicator-gtk3 (Fedora)",
    };
  const shim = join(dirname(helperPath), "lib");
  mkdirSync(shim, { recursive: true });
  const link = join(shim, "libappindicator3.so.1");
  try {
    if (!existsSync(link)) symlinkSync(ayatana, link);
  } catch {
    // Made meanwhile by another start: the same link.
  }
  const current = process.env.LD_LIBRARY_PATH;
  return { env: { LD_LIBRARY_PATH: current ? `${shim}:${current}` : shim } };
}

export function startHelper(
  helperPath: string,
  env: Record<string, string>,
  onClick: (id: string) => void,
  onLog: (line: string) => void,
): TrayHelper {
  const child = spawn(helperPath, [], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
  let isReady = false;
  let pending: TrayMenu | undefined;
  let ids = new Map<number, string>();
  const ended = new Promise<string>((resolve) => {
    child.on("error", (error) => resolve(`the tray helper could not run: ${error.message}`));
    child.on("exit", (code, signal) => resolve(`the tray helper ended (${signal ?? `exit code ${code}`})`));
  });
  const send = (message: unknown) => {
    if (child.stdin.writable) child.stdin.write(`${JSON.stringify(message)}\n`);
  };
  const helperMenu = (menu: TrayMenu) => {
    ids = new Map();
    let next = 1;
    const item = (entry: TrayItem): HelperItem => {
      const id = next++;
      if (entry.id) ids.set(id, entry.id);
      return {
        // The Linux helper draws no check marks: the title carries one.
        title: process.platform === "linux" && entry.checked ? `✔ ${entry.title}` : entry.title,
        tooltip: entry.tooltip ?? "",
        checked: entry.checked ?? false,
        enabled: entry.enabled,
        hidden: false,
        ...(entry.items ? { items: entry.items.map(item) } : {}),
        __id: id,
      };
    };
    return {
      icon: Buffer.from(circleIcon(COLOURS[menu.colour])).toString("base64"),
      title: "",
      tooltip: menu.tooltip,
      items: menu.items.map(item),
    };
  };
  createInterface({ input: child.stdout }).on("line", (line) => {
    let message: { type?: string; item?: { __id?: number } };
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.type === "ready") {
      isReady = true;
      if (pending) send(helperMenu(pending));
      pending = undefined;
    } else if (message.type === "clicked") {
      const id = ids.get(Number(message.item?.__id));
      if (id) onClick(id);
    }
  });
  createInterface({ input: child.stderr }).on("line", (line) => {
    if (line.trim()) onLog(line);
  });
  return {
    show(menu) {
      if (!isReady) pending = menu;
      else send({ type: "update-menu", menu: helperMenu(menu) });
    },
    close() {
      send({ type: "exit" });
      setTimeout(() => child.kill(), 1000).unref();
    },
    ended,
  };
}
