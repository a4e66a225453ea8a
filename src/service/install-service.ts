import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ProxyError } from "../errors.ts";
import { runningService } from "./find-service.ts";
import { logPathOf } from "./service-files.ts";
import { selfCommand } from "./service-process.ts";
import { type Unit, type UnitPlatform, unitFor } from "./service-units.ts";

/**
 * `mcpproxy service install|uninstall`: the login unit of this system written (service-units.ts)
 * and, where the system's manager can be reached, loaded and started. Where it cannot (no
 * `systemctl --user` in a container, a login without a user bus), the file is written all the same
 * and the person is told the commands that enable it. `dryRun` writes and runs nothing, and says
 * what would be (for any platform: how the macOS and Windows units are checked on Linux).
 */
export interface InstallOptions {
  platform: UnitPlatform;
  configPath: string;
  dataDir: string;
  home: string;
  env: Record<string, string | undefined>;
  dryRun?: boolean;
}

export function installService(options: InstallOptions): string {
  const unit = unitOf(options);
  const shown = unit.enable.map(shellLine).join("\n  ");
  if (options.dryRun) return `${unit.file}:\n${unit.content}\nthen:\n  ${shown}\n`;
  mkdirSync(dirname(unit.file), { recursive: true });
  writeFileSync(unit.file, options.platform === "windows" ? utf16(unit.content) : unit.content, {
    mode: 0o644,
  });
  const lines = [`wrote ${unit.file}`];
  if (!canManage(options.platform)) {
    lines.push(
      `${managerName(options.platform)} cannot be reached here, so the unit is not enabled yet; enable it at login with:`,
      `  ${shown}`,
    );
    return `${lines.join("\n")}\n`;
  }
  for (const command of unit.enable) run(command);
  lines.push(`enabled: mcpproxy starts at login (${managerName(options.platform)}), and runs now`);
  const running = runningService(options.dataDir);
  if (running)
    lines.push(
      `(a service is already running, pid ${running.pid}: it keeps serving; the unit's takes over after \`mcpproxy stop\` or at next login)`,
    );
  return `${lines.join("\n")}\n`;
}

export function uninstallService(options: InstallOptions): string {
  const unit = unitOf(options);
  if (options.dryRun)
    return `would run:\n  ${unit.disable.map(shellLine).join("\n  ")}\nand remove ${unit.file}\n`;
  const lines: string[] = [];
  if (canManage(options.platform))
    for (const command of unit.disable) {
      // Not loaded is as good as unloaded.
      Bun.spawnSync(command, { stdout: "ignore", stderr: "ignore" });
    }
  if (existsSync(unit.file)) {
    rmSync(unit.file);
    lines.push(`removed ${unit.file}: mcpproxy no longer starts at login`);
  } else lines.push(`no unit to remove (${unit.file} does not exist)`);
  const running = runningService(options.dataDir);
  if (running) lines.push(`the service still runs (pid ${running.pid}); \`mcpproxy stop\` ends it`);
  return `${lines.join("\n")}\n`;
}

function unitOf(options: InstallOptions): Unit {
  return unitFor(
    options.platform,
    {
      command: selfCommand(),
      configPath: options.configPath,
      dataDir: options.dataDir,
      home: options.home,
      path: options.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      logPath: logPathOf(options.dataDir),
    },
    options.env,
  );
}

const managerName = (platform: UnitPlatform) =>
  platform === "linux" ? "systemctl --user" : platform === "macos" ? "launchctl" : "schtasks";

/** Whether this system's service manager answers here (the user bus, launchctl, schtasks). */
function canManage(platform: UnitPlatform): boolean {
  const probe =
    platform === "linux"
      ? ["systemctl", "--user", "show-environment"]
      : platform === "macos"
        ? ["launchctl", "version"]
        : ["schtasks", "/Query"];
  if (!Bun.which(probe[0] as string)) return false;
  return Bun.spawnSync(probe, { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

function run(command: string[]): void {
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0)
    throw new ProxyError(
      "SERVICE_FAILED",
      `\`${shellLine(command)}\` failed (exit code ${result.exitCode}): ${result.stderr.toString().trim()}`,
    );
}

const shellLine = (command: string[]) =>
  command
    .map((word) => (/^[\w@%+=:,./\\-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`))
    .join(" ");

/** Task Scheduler reads its XML as UTF-16 (the encoding the file declares), with a byte-order mark. */
function utf16(text: string): Buffer {
  return Buffer.from(`\ufeff${text}`, "utf16le");
}
