import { join } from "node:path";
import { SERVICE_RUN_ARGS } from "./service-process.ts";

/**
 * The files that start the service at login, one template per system: a systemd user unit (Linux),
 * a launchd agent (macOS) and a Task Scheduler task (Windows). Each runs `mcpproxy service run`
 * with the config and data dir it was installed for, restarts it when it fails (not when it was
 * stopped: `mcpproxy stop` ends it cleanly, exit 0), and gives it the PATH of the shell that
 * installed it, so that `npx`, `uvx` and the like are found as they are in a terminal.
 */
export type UnitPlatform = "linux" | "macos" | "windows";

export interface UnitInput {
  /** How to run mcpproxy (service-process.ts selfCommand). */
  command: string[];
  configPath: string;
  dataDir: string;
  home: string;
  /** The PATH the service gets. */
  path: string;
  /** Where its output goes where the system does not keep it (launchd). */
  logPath: string;
}

export interface Unit {
  /** Where the file goes. */
  file: string;
  content: string;
  /** The commands that load and start it, where the system has them. */
  enable: string[][];
  /** The commands that stop and unload it. */
  disable: string[][];
}

const UNIT_NAME = "mcpproxy";
const LAUNCHD_LABEL = "io.mcpproxy.service";

export function platformOf(platform: NodeJS.Platform): UnitPlatform {
  return platform === "darwin" ? "macos" : platform === "win32" ? "windows" : "linux";
}

export function unitFor(
  platform: UnitPlatform,
  input: UnitInput,
  env: Record<string, string | undefined>,
): Unit {
  const argv = [
    ...input.command,
    ...SERVICE_RUN_ARGS,
    "--config",
    input.configPath,
    "--data-dir",
    input.dataDir,
  ];
  if (platform === "linux") {
    const dir = env.XDG_CONFIG_HOME || join(input.home, ".config");
    return {
      file: join(dir, "systemd", "user", `${UNIT_NAME}.service`),
      content: systemdUnit(argv, input),
      enable: [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", `${UNIT_NAME}.service`],
      ],
      disable: [
        ["systemctl", "--user", "disable", "--now", `${UNIT_NAME}.service`],
        ["systemctl", "--user", "daemon-reload"],
      ],
    };
  }
  if (platform === "macos") {
    const file = join(input.home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
    const domain = `gui/${process.getuid?.() ?? 501}`;
    return {
      file,
      content: launchdAgent(argv, input),
      enable: [["launchctl", "bootstrap", domain, file]],
      disable: [["launchctl", "bootout", domain, file]],
    };
  }
  const file = join(input.dataDir, `${UNIT_NAME}-task.xml`);
  return {
    file,
    content: scheduledTask(argv, input),
    enable: [
      ["schtasks", "/Create", "/TN", UNIT_NAME, "/XML", file, "/F"],
      ["schtasks", "/Run", "/TN", UNIT_NAME],
    ],
    disable: [
      ["schtasks", "/End", "/TN", UNIT_NAME],
      ["schtasks", "/Delete", "/TN", UNIT_NAME, "/F"],
    ],
  };
}

function systemdUnit(argv: string[], input: UnitInput): string {
  return `[Unit]
Description=mcpproxy: one MCP proxy for every client of this user
Documentation=https://github.com/mcpproxy/mcpproxy/blob/main/docs/service.md

[Service]
Type=simple
ExecStart=${argv.map(systemdWord).join(" ")}
WorkingDirectory=${systemdWord(input.home)}
Environment=${systemdWord(`PATH=${input.path}`)}
# Variables the config's servers expand (\${VAR}), one NAME=value per line; optional.
EnvironmentFile=-${systemdWord(join(input.dataDir, "service.env"))}
StandardOutput=append:${systemdWord(input.logPath)}
StandardError=append:${systemdWord(input.logPath)}
Restart=on-failure
RestartSec=5
# mcpproxy stops its servers on SIGTERM; what is left after this is killed.
TimeoutStopSec=45

[Install]
WantedBy=default.target
`;
}

/** A word of a systemd command line: quoted, with the specifier and variable characters escaped. */
function systemdWord(word: string): string {
  const escaped = word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$");
  return /^[\w@%+=:,./-]+$/.test(word) ? escaped : `"${escaped}"`;
}

function launchdAgent(argv: string[], input: UnitInput): string {
  const strings = (values: string[]) =>
    values.map((value) => `    <string>${xml(value)}</string>`).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
${strings(argv)}
  </array>
  <key>WorkingDirectory</key>
  <string>${xml(input.home)}</string>
  <key>EnvironmentVariables</key>
  <dict>
    <key>PATH</key>
    <string>${xml(input.path)}</string>
  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>StandardOutPath</key>
  <string>${xml(input.logPath)}</string>
  <key>StandardErrorPath</key>
  <string>${xml(input.logPath)}</string>
</dict>
</plist>
`;
}

function scheduledTask(argv: string[], input: UnitInput): string {
  const [program, ...args] = argv;
  return `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>mcpproxy: one MCP proxy for every client of this user</Description>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <RestartOnFailure>
      <Interval>PT1M</Interval>
      <Count>999</Count>
    </RestartOnFailure>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>${xml(program ?? "mcpproxy")}</Command>
      <Arguments>${xml(args.map(windowsWord).join(" "))}</Arguments>
      <WorkingDirectory>${xml(input.home)}</WorkingDirectory>
    </Exec>
  </Actions>
</Task>
`;
}

/** A word of a Windows command line (the rules CommandLineToArgvW reads back). */
function windowsWord(word: string): string {
  if (word !== "" && !/[\s"]/.test(word)) return word;
  return `"${word.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, "$1$1")}"`;
}

function xml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}
