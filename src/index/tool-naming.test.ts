import { describe, expect, test } from "bun:test";
import { assignToolNames, toolKey } from "./tool-naming.ts";

const VALID = /^[A-Za-z0-9_-]+$/;

describe("assignToolNames", () => {
  test("keeps clean names as server__tool", () => {
    const names = assignToolNames([{ server: "github", tool: "create_issue" }], 60);
    expect(names.get(toolKey({ server: "github", tool: "create_issue" }))).toBe("github__create_issue");
  });

  test("replaces characters outside [A-Za-z0-9_-] in server names with spaces, @ and /", () => {
    const refs = [
      { server: "my server", tool: "echo" },
      { server: "@scope/pkg", tool: "do.it" },
      { server: "arizeai/phoenix-mcp", tool: "list-projects" },
    ];
    const names = assignToolNames(refs, 60);
    expect(names.get(toolKey(refs[0]!))).toBe("my_server__echo");
    expect(names.get(toolKey(refs[1]!))).toBe("_scope_pkg__do_it");
    expect(names.get(toolKey(refs[2]!))).toBe("arizeai_phoenix-mcp__list-projects");
    for (const name of names.values()) expect(name).toMatch(VALID);
  });

  test("gives altered names that collide a stable hash suffix and leaves the clean one alone", () => {
    const refs = [
      { server: "my_server", tool: "echo" },
      { server: "my server", tool: "echo" },
      { server: "my/server", tool: "echo" },
    ];
    const names = assignToolNames(refs, 60);
    expect(names.get(toolKey(refs[0]!))).toBe("my_server__echo");
    const a = names.get(toolKey(refs[1]!))!;
    const b = names.get(toolKey(refs[2]!))!;
    expect(a).toMatch(/^my_server__echo_[0-9a-f]{6}$/);
    expect(b).toMatch(/^my_server__echo_[0-9a-f]{6}$/);
    expect(a).not.toBe(b);
    // Same input, any order: same names.
    const again = assignToolNames([...refs].reverse(), 60);
    for (const ref of refs) expect(again.get(toolKey(ref))).toBe(names.get(toolKey(ref))!);
  });

  test("suffixes every member when two unaltered names collide", () => {
    const refs = [
      { server: "a__b", tool: "c" },
      { server: "a", tool: "b__c" },
    ];
    const names = assignToolNames(refs, 60);
    const values = [...names.values()];
    expect(new Set(values).size).toBe(2);
    for (const value of values) expect(value).toMatch(/^a__b__c_[0-9a-f]{6}$/);
  });

  test("shortens over-long names to the limit with a hash suffix, keeping them distinct", () => {
    const refs = [
      { server: "a-very-long-server-name-indeed", tool: "and_an_even_longer_tool_name_number_one" },
      { server: "a-very-long-server-name-indeed", tool: "and_an_even_longer_tool_name_number_two" },
    ];
    const names = assignToolNames(refs, 40);
    const values = [...names.values()];
    expect(new Set(values).size).toBe(2);
    for (const value of values) {
      expect(value.length).toBeLessThanOrEqual(40);
      expect(value).toMatch(VALID);
      expect(value).toMatch(/^a-very-long-server-name-indeed__a_[0-9a-f]{6}$/);
    }
  });

  test("never hands out a reserved built-in name", () => {
    const ref = { server: "retrieve", tool: "tools" };
    const names = assignToolNames([ref], 60, new Set(["retrieve__tools"]));
    expect(names.get(toolKey(ref))).not.toBe("retrieve__tools");
  });

  test("a person's rename takes the tool part, and two tools renamed alike stay apart", () => {
    const push = { server: "git", tool: "push", shownAs: "publish" };
    const upload = { server: "git", tool: "upload", shownAs: "publish" };
    const plain = { server: "git", tool: "status" };
    const names = assignToolNames([push, plain], 60);
    expect(names.get(toolKey(push))).toBe("git__publish");
    expect(names.get(toolKey(plain))).toBe("git__status");
    const clash = assignToolNames([push, upload], 60);
    expect(clash.get(toolKey(push))).not.toBe(clash.get(toolKey(upload)));
    expect(clash.get(toolKey(push))).toMatch(/^git__publish_[0-9a-f]{6}$/);
    expect(clash.get(toolKey(upload))).toMatch(/^git__publish_[0-9a-f]{6}$/);
  });
});
