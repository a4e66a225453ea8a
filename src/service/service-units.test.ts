import { describe, expect, test } from "bun:test";
import { unitFor } from "./service-units.ts";

const input = {
  command: ["/opt/my tools/mcpproxy"],
  configPath: "/home/ann/100% & <more>/mcp_config.json",
  dataDir: "/home/ann/.mcpproxy",
  home: "/home/ann",
  path: "/usr/local/bin:/usr/bin:/bin",
  logPath: "/home/ann/.mcpproxy/service.log",
};

/** A Windows command line read back as CommandLineToArgvW reads it. */
function windowsArgv(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let quoted = false;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (char === "\\") {
      let slashes = 0;
      while (line[i] === "\\") {
        slashes++;
        i++;
      }
      if (line[i] === '"') {
        word += "\\".repeat(Math.floor(slashes / 2));
        if (slashes % 2 === 1) word += '"';
        else quoted = !quoted;
      } else {
        word += "\\".repeat(slashes);
        i--;
      }
      started = true;
    } else if (char === '"') {
      quoted = !quoted;
      started = true;
    } else if (char === " " && !quoted) {
      if (started) words.push(word);
      word = "";
      started = false;
    } else {
      word += char;
      started = true;
    }
  }
  if (started) words.push(word);
  return words;
}

const xmlText = (content: string, tag: string) =>
  [...content.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))].map((match) =>
    (match[1] ?? "")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, "&"),
  );

describe("the login units", () => {
  test("systemd: the user unit runs `service run`, quoted and escaped, restarts on failure, logs to the data dir", () => {
    const unit = unitFor("linux", input, { XDG_CONFIG_HOME: "/home/ann/.cfg" });
    expect(unit.file).toBe("/home/ann/.cfg/systemd/user/mcpproxy.service");
    expect(unit.content).toContain(
      'ExecStart="/opt/my tools/mcpproxy" service run --config "/home/ann/100%% & <more>/mcp_config.json" --data-dir /home/ann/.mcpproxy',
    );
    expect(unit.content).toContain("Restart=on-failure\n");
    expect(unit.content).toContain("StandardError=append:/home/ann/.mcpproxy/service.log\n");
    expect(unit.content).toContain("WantedBy=default.target\n");
    expect(unitFor("linux", input, {}).file).toBe("/home/ann/.config/systemd/user/mcpproxy.service");
    expect(unit.enable.at(-1)).toEqual(["systemctl", "--user", "enable", "--now", "mcpproxy.service"]);
  });

  test("launchd: the agent's arguments are XML-escaped one by one; it starts at load and again only after a failure", () => {
    const unit = unitFor("macos", input, {});
    expect(unit.file).toBe("/home/ann/Library/LaunchAgents/io.mcpproxy.service.plist");
    expect(xmlText(unit.content, "string").slice(1, 8)).toEqual([
      "/opt/my tools/mcpproxy",
      "service",
      "run",
      "--config",
      "/home/ann/100% & <more>/mcp_config.json",
      "--data-dir",
      "/home/ann/.mcpproxy",
    ]);
    expect(unit.content).toMatch(/<key>RunAtLoad<\/key>\s*<true\/>/);
    expect(unit.content).toMatch(/<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>/);
    expect(unit.content.match(/<dict>/g)?.length).toBe(unit.content.match(/<\/dict>/g)?.length);
    expect(unit.enable[0]?.slice(0, 2)).toEqual(["launchctl", "bootstrap"]);
  });

  test("Windows: the task's command line reads back as the same arguments; it runs at logon and restarts on failure", () => {
    const tricky = {
      ...input,
      command: ["C:\\Program Files\\mcpproxy\\mcpproxy.exe"],
      dataDir: 'C:\\Users\\ann\\say "hi"\\',
    };
    const unit = unitFor("windows", tricky, {});
    const [command] = xmlText(unit.content, "Command");
    const [args] = xmlText(unit.content, "Arguments");
    expect(command).toBe("C:\\Program Files\\mcpproxy\\mcpproxy.exe");
    expect(windowsArgv(args ?? "")).toEqual([
      "service",
      "run",
      "--config",
      "/home/ann/100% & <more>/mcp_config.json",
      "--data-dir",
      'C:\\Users\\ann\\say "hi"\\',
    ]);
    expect(unit.content).toContain("<LogonTrigger>");
    expect(unit.content).toMatch(/<RestartOnFailure>\s*<Interval>PT1M<\/Interval>/);
    expect(unit.enable[0]).toEqual(["schtasks", "/Create", "/TN", "mcpproxy", "/XML", unit.file, "/F"]);
  });
});
