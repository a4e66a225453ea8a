/**
 * A notifier: records every change of the tools (a session registered or dropped tools, the
 * catalog gained or lost some) as one JSON line in `<dataDir>/tool-changes.jsonl`, and, with a
 * `webhook` URL, posts the same JSON there (a chat channel, a dashboard). Failures are logged by
 * the proxy and never reach the agent.
 *
 *   "plugins": ["./notify-on-change.ts"]
 *   "plugins": [{ "path": "./notify-on-change.ts", "options": { "webhook": "http://127.0.0.1:9000/hook" } }]
 */
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import type { Plugin, PluginContext } from "../src/plugin-api.ts";

let context: PluginContext<{ webhook?: string } | undefined> | undefined;

export default {
  name: "notify-on-change",
  setup(ctx) {
    context = ctx as PluginContext<{ webhook?: string } | undefined>;
  },
  async onToolsChanged(event) {
    if (!context) return;
    const line = JSON.stringify({ at: new Date().toISOString(), ...event });
    await appendFile(join(context.dataDir, "tool-changes.jsonl"), `${line}\n`);
    const webhook = context.options?.webhook;
    if (webhook) {
      const response = await fetch(webhook, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: line,
        signal: context.signal,
      });
      if (!response.ok) throw new Error(`the webhook answered ${response.status}`);
    }
  },
} satisfies Plugin;
