import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { cleanupAfterEach, connectStdio, eventually, fixtureEntry, retrieve } from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * A burst of notifications/tools/list_changed from one server is coalesced: one re-list in flight
 * and one pending at most, through the compiled binary against a real server that counts the
 * tools/list requests it answers.
 */

const scope = cleanupAfterEach();
const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((block) => block.text ?? "").join("");
const call = (client: Client, name: string, args: object) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } });

describe("a list_changed storm", () => {
  test("500 notifications in a burst cost at most two re-lists, and the list ends current", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        // `auto`: the marker tool changes with each generation and must not wait for approval.
        stormy: { ...fixtureEntry({ args: ["--storm-tools", "--many-tools", "2000"] }), trust: "auto" },
        calm: fixtureEntry({ args: ["--name", "calm"] }),
      },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const requests = async () => Number(textOf(await call(proxy.client, "stormy__tools_list_requests", {})));
    const initial = await requests();
    expect(initial).toBe(1);

    expect(textOf(await call(proxy.client, "stormy__storm_list_changed", { count: 500 }))).toBe(
      "sent 500; generation 500",
    );
    const marker = await eventually(
      async () => (await retrieve(proxy.client, "marker of the tool list generation")).tools,
      (tools) => tools.some((tool) => tool.description.endsWith("generation 500")),
      30_000,
    );
    expect(marker.find((tool) => tool.tool === "generation_marker")?.description).toBe(
      "Marker of the tool list generation 500",
    );
    // Whatever was still pending has had time to run.
    await Bun.sleep(1_000);
    expect((await requests()) - initial).toBeLessThanOrEqual(2);
    expect(textOf(await call(proxy.client, "calm__echo", { message: "unbothered" }))).toBe(
      "calm echo: unbothered",
    );
  });
});
