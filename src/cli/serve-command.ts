import { serveProxy } from "../app/serve-proxy.ts";
import type { SettingOverrides } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { profileList } from "../profiles/profile-deps.ts";
import { resolveAncestry } from "../upstream/proxy-ancestry.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";
import { STORE_OPTION, storeOverrides } from "./command-store.ts";

export const serveCommand: Command = {
  name: "serve",
  summary:
    "Run the proxy: serve retrieve_tools and call_tool to an MCP client over stdio (default) or HTTP, " +
    "answering from the saved index at once while upstream servers connect in the background. Over HTTP, " +
    "streamable HTTP is at /mcp (each profile of mcpproxy.profiles at /mcp/p/NAME) and the legacy SSE transport " +
    "at /sse (both on every HTTP transport).",
  usage:
    "mcpproxy serve [--config FILE] [--transport stdio|streamable-http|sse] [--host H] [--port P] " +
    "[--routing call-tool|dynamic|auto|all] [--passthrough SERVER] [--profile NAME] [--store URL] [--strict-plugins] [--log-level L] [--data-dir DIR]",
  options: {
    transport: {
      type: "string",
      help: "--transport T      stdio (default), streamable-http (alias http) or sse; or MCPPROXY_TRANSPORT",
    },
    host: {
      type: "string",
      help:
        "--host H           HTTP bind address (default 127.0.0.1), and the one Host name requests may use " +
        "besides loopback ones (0.0.0.0: any name); or MCPPROXY_HOST",
    },
    port: {
      type: "string",
      help: "--port P           HTTP port, 0 for any free one (default 8000); or MCPPROXY_PORT",
    },
    routing: {
      type: "string",
      help:
        "--routing R        call-tool (default: only retrieve_tools and call_tool), dynamic (found tools are " +
        "registered as tools of their own and the client is told with list_changed), auto (dynamic for " +
        "clients that re-list their tools when told) or all (every approved tool listed, in pages, for clients " +
        'that search their own lists; the mcpproxy.alwaysLoad most used marked "anthropic/alwaysLoad"); ' +
        "or MCPPROXY_ROUTING_TYPE",
    },
    passthrough: {
      type: "string",
      help:
        "--passthrough S    serve the one configured server S under its own tool, prompt and resource names " +
        "(no retrieve_tools or call_tool), with approvals, limits, stats and plugins still in the path: a bridge " +
        "between stdio and HTTP and between MCP revisions",
    },
    profile: {
      type: "string",
      help:
        "--profile NAME     over stdio, serve only the profile NAME of mcpproxy.profiles (its servers and tools: " +
        "search, calls, resources, prompts, stats); over HTTP every profile is at /mcp/p/NAME instead",
    },
    ...STORE_OPTION,
    "strict-plugins": {
      type: "boolean",
      help: "--strict-plugins   make every plugin failure an error (for plugin tests); or MCPPROXY_STRICT_PLUGINS",
    },
    "log-level": {
      type: "string",
      help: "--log-level L      error, warn, info (default) or debug (every call, with its arguments' shape); or MCPPROXY_LOG_LEVEL",
    },
    ...COMMON_OPTIONS,
  },
  async run(values) {
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
    const ancestry = resolveAncestry(config.configPath, process.env);
    return serveProxy(
      config,
      ancestry,
      commandLogger(config),
      (text) => loadCommandConfig(values, overrides, text),
      { passthrough: typeof values.passthrough === "string" ? values.passthrough : undefined, profile },
    );
  },
};
