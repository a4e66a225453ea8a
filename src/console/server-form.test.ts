import { describe, expect, test } from "bun:test";
import { entriesOfForm } from "./server-form.ts";

describe("the Add a server form", () => {
  test("a command with its arguments and the names of the variables it gets", () => {
    expect(
      entriesOfForm({
        name: "gh",
        command: "npx",
        args: "-y\n @scope/server \n",
        env: "GITHUB_TOKEN, OTHER",
      }),
    ).toEqual({
      gh: {
        command: "npx",
        args: ["-y", "@scope/server"],
        env: { GITHUB_TOKEN: "${GITHUB_TOKEN}", OTHER: "${OTHER}" },
      },
    });
  });

  test("a URL with its headers", () => {
    expect(
      entriesOfForm({ name: "web", url: "https://x.example/mcp", headers: "Authorization: Bearer ${T}\n" }),
    ).toEqual({
      web: { url: "https://x.example/mcp", headers: { Authorization: "Bearer ${T}" } },
    });
  });

  test("a client's JSON pasted as it is: its mcpServers, a map of entries, or one entry named by the form", () => {
    const entry = { command: "uvx", args: ["mcp-server-git"] };
    expect(entriesOfForm({ json: JSON.stringify({ mcpServers: { git: entry } }) })).toEqual({ git: entry });
    expect(entriesOfForm({ json: JSON.stringify({ git: entry, other: entry }) })).toEqual({
      git: entry,
      other: entry,
    });
    expect(entriesOfForm({ name: "git", json: JSON.stringify(entry) })).toEqual({ git: entry });
  });

  test("what cannot be an entry says why", () => {
    expect(() => entriesOfForm({ name: "x" })).toThrow("either a command");
    expect(() => entriesOfForm({ name: "x", command: "a", url: "b" })).toThrow("either a command");
    expect(() => entriesOfForm({ command: "a" })).toThrow("name");
    expect(() => entriesOfForm({ name: "x", command: "a", env: "NOT-A-NAME" })).toThrow(
      "not a variable name",
    );
    expect(() => entriesOfForm({ name: "x", url: "u", headers: "no colon" })).toThrow('"Name: value"');
    expect(() => entriesOfForm({ json: "{nope" })).toThrow("not JSON");
    expect(() => entriesOfForm({ json: "[]" })).toThrow("object");
    expect(() => entriesOfForm({ json: JSON.stringify({ command: "a" }) })).toThrow("no name");
    expect(() => entriesOfForm({ json: JSON.stringify({ a: 1 }) })).toThrow("must be an object");
  });
});
