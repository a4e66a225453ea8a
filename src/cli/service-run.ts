import type { SettingOverrides } from "../config/load-config.ts";
import { homeDir } from "../config/paths.ts";
import { ProxyError } from "../errors.ts";
import { installService, uninstallService } from "../service/install-service.ts";
import { runService } from "../service/run-service.ts";
import { platformOf, type UnitPlatform } from "../service/service-units.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";

const PLATFORMS: readonly UnitPlatform[] = ["linux", "macos", "windows"];

/** `mcpproxy service install|uninstall|run` (its flags and help: service-command.ts). */
export async function runServiceCommand(values: CommandValues, positionals: string[]): Promise<number> {
  const [action, ...rest] = positionals;
  if ((action !== "run" && action !== "install" && action !== "uninstall") || rest.length > 0)
    throw new ProxyError(
      "USAGE",
      `mcpproxy service: say \`service install\`, \`service uninstall\` or \`service run\`${action ? `, not \`service ${positionals.join(" ")}\`` : ""}`,
    );
  const logLevel =
    typeof values["log-level"] === "string"
      ? { logLevel: { value: values["log-level"], flag: "--log-level" } }
      : {};
  const config = loadCommandConfig(values, logLevel);
  if (action === "run") return runInForeground(values, logLevel, config.dataDir);
  const platform = typeof values.platform === "string" ? values.platform : undefined;
  if (platform !== undefined && !PLATFORMS.includes(platform as UnitPlatform))
    throw new ProxyError("USAGE", `--platform ${platform}: say linux, macos or windows`);
  if (platform !== undefined && !values["dry-run"])
    throw new ProxyError(
      "USAGE",
      "--platform goes with --dry-run: a unit is installed for the system it runs on",
    );
  const options = {
    platform: (platform as UnitPlatform | undefined) ?? platformOf(process.platform),
    configPath: config.configPath,
    dataDir: config.dataDir,
    home: homeDir(process.env),
    env: process.env,
    dryRun: values["dry-run"] === true,
  };
  process.stdout.write(action === "install" ? installService(options) : uninstallService(options));
  return 0;
}

function runInForeground(
  values: CommandValues,
  logLevel: SettingOverrides,
  dataDir: string,
): Promise<number> {
  return runService({
    dataDir,
    // The service's own settings, whatever the file says: streamable HTTP on loopback, its port, the token.
    load: (port, text) =>
      loadCommandConfig(
        values,
        {
          ...logLevel,
          transport: { value: "streamable-http", flag: "service run" },
          host: { value: "127.0.0.1", flag: "service run" },
          port: { value: String(port), flag: "service run" },
          requireToken: { value: true, flag: "service run" },
        },
        text,
      ),
    logger: commandLogger,
    say: (line) => void process.stdout.write(`${line}\n`),
  });
}
