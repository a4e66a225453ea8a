import { COMMON_OPTIONS, type Command } from "./command.ts";

export const consoleCommand: Command = {
  name: "console",
  summary:
    "Open the console (servers, approvals, search, activity) in your browser: finds the background service, or an " +
    "HTTP serve of this config, and opens a link that signs you in once (it is printed too).",
  usage: "mcpproxy console [--no-open] [--url URL] [--config FILE] [--data-dir DIR]",
  options: {
    "no-open": {
      type: "boolean",
      help: "--no-open          print the sign-in link without opening a browser",
    },
    url: {
      type: "string",
      help: "--url URL          the proxy to open (its address, e.g. http://127.0.0.1:8000); default: the service, then the config's host and port",
    },
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./console-run.ts")).runConsoleCommand;
  },
};
