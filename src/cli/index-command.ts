import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

export const indexCommand: Command = {
  name: "index",
  summary:
    "Connect to every enabled server, index their tools incrementally and save the index. Prints what was\n" +
    "added, updated, removed and unchanged. Exits 1 when a server could not be indexed (the others are saved).\n" +
    "While a `serve` keeps the data dir, that serve re-indexes its servers and this prints its summary;\n" +
    "another `index` run on the data dir is waited for. With --store, the replica holding the shared\n" +
    "store's lease re-indexes the servers of the store's registry and this prints its summary (exits 1\n" +
    "when no replica holds the lease or none answers).",
  usage: "mcpproxy index [--config FILE] [--data-dir DIR] [--force] [--store URL]",
  options: {
    force: {
      type: "boolean",
      help:
        "--force            drop the saved index and rebuild it from scratch (refused with --store: the shared\n" +
        "                   catalog holds every replica's approvals)",
    },
    ...STORE_OPTION,
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./index-run.ts")).runIndexCommand;
  },
};
