import { describe, expect, test } from "bun:test";
import type { QuarantinedCapability } from "../index/capability-approvals.ts";
import type { CatalogTool } from "../index/catalog-types.ts";
import type { QuarantinedTool } from "../index/tool-approvals.ts";
import { choose, namesOf, type Waiting } from "./approval-choice.ts";

const tool = (server: string, name: string, findings: string[] = []) =>
  ({
    server,
    tool: name,
    name: `${server}__${name}`,
    reason: "new",
    findings,
  }) as unknown as QuarantinedTool<CatalogTool>;
const prompt = (server: string, name: string, findings: string[] = []): QuarantinedCapability => ({
  server,
  kind: "prompt",
  name,
  reason: "new",
  findings,
  definition: {},
});

const waiting: Waiting = {
  launches: [],
  servers: ["s"],
  tools: [tool("s", "read"), tool("s", "echo", ["instructions: asks to read secrets"]), tool("t", "x")],
  capabilities: [prompt("s", "greet", ["hidden characters"]), prompt("s", "plain")],
};

describe("what approve approves of what waits", () => {
  test("a whole server: everything of it but what the scan flags", () => {
    const { chosen, approved, withheld } = choose(waiting, ["s"], { all: false, yesFlagged: false });
    expect(namesOf(chosen)).toEqual(["s", "s/read", "s/echo", "s/greet (prompt)", "s/plain (prompt)"]);
    expect(namesOf(approved)).toEqual(["s", "s/read", "s/plain (prompt)"]);
    expect(namesOf(withheld)).toEqual(["s/echo", "s/greet (prompt)"]);
  });

  test("--all is no confirmation either", () => {
    const { approved, withheld } = choose(waiting, [], { all: true, yesFlagged: false });
    expect(namesOf(approved)).toEqual(["s", "s/read", "t/x", "s/plain (prompt)"]);
    expect(namesOf(withheld)).toEqual(["s/echo", "s/greet (prompt)"]);
  });

  test("a flagged item named by itself (SERVER/NAME or its public name) is approved", () => {
    expect(namesOf(choose(waiting, ["s/echo"], { all: false, yesFlagged: false }).approved)).toEqual([
      "s/echo",
    ]);
    expect(namesOf(choose(waiting, ["s__echo"], { all: false, yesFlagged: false }).approved)).toEqual([
      "s/echo",
    ]);
    const both = choose(waiting, ["s", "s/greet"], { all: false, yesFlagged: false });
    expect(namesOf(both.withheld)).toEqual(["s/echo"]);
  });

  test("--yes-flagged confirms every flagged one chosen", () => {
    const { approved, withheld } = choose(waiting, ["s"], { all: false, yesFlagged: true });
    expect(namesOf(withheld)).toEqual([]);
    expect(namesOf(approved)).toContain("s/echo");
  });
});
