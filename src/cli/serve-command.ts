import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

export const serveCommand: Command = {
  name: "serve",
  summary:
    "Run the proxy: serve retrieve_tools and call_tool to an MCP client over stdio (default) or HTTP, " +
    "answering from the saved index at once while upstream servers connect in the background. Over HTTP, " +
    "streamable HTTP is at /mcp (each profile of mcpproxy.profiles at /mcp/p/NAME) and the legacy SSE transport " +
    "at /sse (both on every HTTP transport). Over stdio, when the background service of its data dir runs " +
    "(`mcpproxy start`), serve is a thin bridge to it: one proxy for every client.",
  usage:
    "mcpproxy serve [--config FILE] [--transport stdio|streamable-http|sse] [--host H] [--port P] " +
    "[--routing call-tool|dynamic|auto|all] [--passthrough SERVER] [--profile NAME] [--standalone] [--store URL] [--strict-plugins] [--log-level L] [--data-dir DIR]",
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
    standalone: {
      type: "boolean",
      help:
        "--standalone       over stdio, serve on its own even when the background service (`mcpproxy start`) runs " +
        "for this data dir; without it a stdio serve attaches to that service, as a thin bridge",
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
  async load() {
    return (await import("./serve-run.ts")).runServeCommand;
  },
};
