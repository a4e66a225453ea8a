import type { SettingOverrides } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { profileList } from "../profiles/profile-deps.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { storeOverrides } from "./command-store.ts";

/** `mcpproxy serve`: what it does once its flags are parsed (its flags and help: serve-command.ts). */
export async function runServeCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const overrides: SettingOverrides = {};
  if (typeof values.transport === "string")
    overrides.transport = { value: values.transport, flag: "--transport" };
  if (typeof values.host === "string") overrides.host = { value: values.host, flag: "--host" };
  if (typeof values.port === "string") overrides.port = { value: values.port, flag: "--port" };
  if (typeof values.routing === "string") overrides.routing = { value: values.routing, flag: "--routing" };
  Object.assign(overrides, storeOverrides(values));
  if (values["strict-plugins"]) overrides.strictPlugins = { value: true, flag: "--strict-plugins" };
  if (typeof values["log-level"] === "string")
    overrides.logLevel = { value: values["log-level"], flag: "--log-level" };
  const config = loadCommandConfig(values, overrides);
  const profile = typeof values.profile === "string" ? values.profile : undefined;
  if (profile !== undefined) {
    if (!Object.hasOwn(config.profiles, profile))
      throw new ProxyError(
        "USAGE",
        `--profile ${profile}: no such profile in ${config.configPath}; the profiles are ${profileList(config.profiles)}`,
      );
    if (typeof values.passthrough === "string")
      throw new ProxyError(
        "USAGE",
        "--profile and --passthrough do not go together: passthrough serves one server as it is, a profile narrows the search",
      );
    if (config.transport !== "stdio")
      throw new ProxyError(
        "USAGE",
        `--profile is for stdio; over HTTP every profile is served at /mcp/p/<name> (here /mcp/p/${profile})`,
      );
  }
  const logger = commandLogger(config);
  if (config.transport === "stdio" && !values.standalone && typeof values.passthrough !== "string") {
    // The bridge loads none of the proxy: the service it attaches to is the proxy.
    const { serviceToAttach, serveThroughService } = await import("../service/attach-service.ts");
    const link = await serviceToAttach(config, profile, logger);
    if (link) return serveThroughService(link, config, logger);
  }
  const { serveProxy } = await import("../app/serve-proxy.ts");
  const { resolveAncestry } = await import("../upstream/proxy-ancestry.ts");
  const ancestry = resolveAncestry(config.configPath, process.env);
  return serveProxy(config, ancestry, logger, (text) => loadCommandConfig(values, overrides, text), {
    passthrough: typeof values.passthrough === "string" ? values.passthrough : undefined,
    profile,
  });
}
