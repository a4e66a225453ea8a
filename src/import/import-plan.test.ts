import { describe, expect, test } from "bun:test";
import type { ClientFile } from "./client-configs.ts";
import { type FoundServer, identityOf, planImport } from "./import-plan.ts";

const cursor: ClientFile = {
  client: "cursor",
  path: "/h/.cursor/mcp.json",
  scope: "user",
  layout: "mcpServers",
};
const found = (name: string, entry: Record<string, unknown>): FoundServer => ({
  file: cursor,
  name,
  entry,
  notes: [],
});
const memory = (path?: string) => ({
  command: "npx",
  args: ["-y", "@modelcontextprotocol/server-memory"],
  ...(path ? { env: { MEMORY_FILE_PATH: path } } : {}),
});

describe("a server's identity", () => {
  test("is what it runs and what it is given, whatever the order of the keys", () => {
    expect(identityOf({ command: "x", env: { A: "1", B: "2" } })).toBe(
      identityOf({ env: { B: "2", A: "1" }, command: "x" }),
    );
    expect(identityOf(memory("/a"))).not.toBe(identityOf(memory("/b")));
    expect(identityOf(memory())).not.toBe(identityOf(memory("/a")));
    expect(identityOf({ url: "https://x/mcp/" })).toBe(identityOf({ url: "https://x/mcp" }));
    expect(identityOf({ url: "https://x/mcp", headers: { A: "1" } })).not.toBe(
      identityOf({ url: "https://x/mcp", headers: { A: "2" } }),
    );
  });
});

describe("the import plan", () => {
  test("the same command with another env is added under a suffixed name, with what differs", () => {
    const actions = planImport({ memory: memory("/a") }, [found("memory", memory("/b"))]);
    expect(actions).toEqual([
      {
        kind: "add",
        server: found("memory", memory("/b")),
        as: "memory-cursor",
        renamedFrom: "memory",
        differsFrom: { name: "memory", given: "env", keys: ["MEMORY_FILE_PATH"] },
      },
    ]);
  });

  test("the same command and env is skipped, under any name", () => {
    expect(planImport({ memory: memory("/a") }, [found("notes", memory("/a"))])).toEqual([
      { kind: "skip", server: found("notes", memory("/a")), sameAs: "memory" },
    ]);
  });

  test("a server added earlier in the same import counts: a third copy of one of two is skipped", () => {
    const actions = planImport({}, [
      found("memory", memory("/a")),
      found("memory", memory("/b")),
      found("again", memory("/b")),
    ]);
    expect(
      actions.map((action) => (action.kind === "add" ? `add ${action.as}` : `skip ${action.sameAs}`)),
    ).toEqual(["add memory", "add memory-cursor", "skip memory-cursor"]);
    expect(actions[0]).not.toHaveProperty("differsFrom");
    expect(actions[1]).toMatchObject({ differsFrom: { name: "memory", keys: ["MEMORY_FILE_PATH"] } });
  });

  test("an env set on one only, and a URL's headers, are differences too", () => {
    const [noEnv] = planImport({ memory: memory() }, [found("mem", memory("/a"))]);
    expect(noEnv).toMatchObject({ kind: "add", as: "mem", differsFrom: { name: "memory", given: "env" } });
    expect(noEnv).not.toHaveProperty("renamedFrom");
    const [headers] = planImport({ gh: { url: "https://x/mcp", headers: { Authorization: "a" } } }, [
      found("gh", { url: "https://x/mcp", headers: { Authorization: "b" } }),
    ]);
    expect(headers).toMatchObject({
      as: "gh-cursor",
      differsFrom: { name: "gh", given: "headers", keys: ["Authorization"] },
    });
  });
});
