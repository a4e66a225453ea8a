import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

export const doctorCommand: Command = {
  name: "doctor",
  summary:
    "Check the set-up and say what to fix: which config file is used and why, the data dir and its index, " +
    "every enabled server (started for real: time to initialize, tool count, why it fails), the embedder, " +
    "the plugins, and whether your MCP clients point at mcpproxy. With a shared store (--store): whether it " +
    "answers, its schema is up to date, MCPPROXY_STORE_KEY is its key, which replicas are alive and who holds " +
    "the lease, its catalog, and the servers of its registry instead of the file's. Exits 1 when something is broken.",
  usage: "mcpproxy doctor [--json] [--store URL] [--config FILE] [--data-dir DIR]",
  options: {
    json: { type: "boolean", help: "--json             print {ok, findings: [...]} instead of lines" },
    ...STORE_OPTION,
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./doctor-run.ts")).runDoctorCommand;
  },
};
