import { describe, expect, test } from "bun:test";
import type { RetrieveToolsResult } from "../../index/retrieve-tools.ts";
import { MAX_NAMED_CONNECTING, searchWhileConnecting } from "./search-while-connecting.ts";

const answer = (): RetrieveToolsResult => ({ query: "echo", tools: [] });

describe("an answer while servers are still starting", () => {
  test("names the first of them in the config's order and says how many there are in all", async () => {
    const starting = Array.from({ length: 20_674 }, (_, i) => `server-${i}`);
    const result = await searchWhileConnecting({
      search: async () => answer(),
      indexedTools: () => 0,
      connecting: () => starting,
    });
    const connecting = (result as { connecting?: { servers: string[]; count: number; hint: string } })
      .connecting;
    expect(connecting?.servers).toEqual(starting.slice(0, MAX_NAMED_CONNECTING));
    expect(connecting?.count).toBe(20_674);
    expect(connecting?.hint).toContain("still starting");
  });

  test("names every one of a few, and nothing once none is starting", async () => {
    const few = await searchWhileConnecting({
      search: async () => answer(),
      indexedTools: () => 0,
      connecting: () => ["slow", "slower"],
    });
    expect((few as { connecting?: unknown }).connecting).toMatchObject({
      servers: ["slow", "slower"],
      count: 2,
    });
    const none = await searchWhileConnecting({
      search: async () => answer(),
      indexedTools: () => 0,
      connecting: () => [],
    });
    expect((none as { connecting?: unknown }).connecting).toBeUndefined();
  });
});
