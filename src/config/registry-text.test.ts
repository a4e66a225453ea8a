import { describe, expect, test } from "bun:test";
import { parseConfigText } from "./config-file.ts";
import { configTextWithServers } from "./registry-text.ts";

describe("configTextWithServers", () => {
  test("replaces the file's servers with the registry's and keeps every other setting and comment", () => {
    const file = `{
  // the team's proxy
  "mcpproxy": { "topK": 7 },
  "mcpServers": { "old": { "command": "old-server" } }
}
`;
    const text = configTextWithServers(file, { fx: { command: "fx", args: ["${TOKEN}"] } });
    expect(text).toContain("// the team's proxy");
    expect(parseConfigText(text, "c.json")).toEqual({
      mcpproxy: { topK: 7 },
      mcpServers: { fx: { command: "fx", args: ["${TOKEN}"] } },
    });
  });

  test("drops VS Code's servers section, so no file server survives beside the registry's", () => {
    const text = configTextWithServers(`{"servers": {"vs": {"type": "stdio", "command": "x"}}}`, {});
    expect(parseConfigText(text, "c.json")).toEqual({ mcpServers: {} });
  });

  test("a missing or empty file is an empty config with the registry's servers", () => {
    for (const file of [undefined, "", "  \n"]) {
      expect(parseConfigText(configTextWithServers(file, { a: { url: "http://h/mcp" } }), "c.json")).toEqual({
        mcpServers: { a: { url: "http://h/mcp" } },
      });
    }
  });

  test("a server named __proto__ stays a server, not a prototype", () => {
    const servers = JSON.parse('{"__proto__": {"command": "x"}}') as Record<string, Record<string, unknown>>;
    const parsed = parseConfigText(configTextWithServers("{}", servers), "c.json") as {
      mcpServers: Record<string, unknown>;
    };
    expect(Object.keys(parsed.mcpServers)).toEqual(["__proto__"]);
  });
});
