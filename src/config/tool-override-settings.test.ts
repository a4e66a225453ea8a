import { describe, expect, test } from "bun:test";
import { parseTestConfig, problemsOf } from "./config-test-support.ts";

const parse = (raw: unknown) => parseTestConfig(raw);

describe("tool overrides in a server entry", () => {
  test("a Cline/Roo Code entry with disabledTools pastes unchanged and becomes enabled: false overrides", () => {
    const config = parse({
      mcpServers: {
        git: {
          command: "uvx",
          args: ["mcp-server-git"],
          disabled: false,
          autoApprove: ["git_status"],
          alwaysAllow: ["git_status"],
          disabledTools: ["git_reset", "git_push"],
          tools: {
            git_status: { name: "status", description: "What changed", annotations: { readOnlyHint: true } },
          },
        },
      },
    });
    expect(config.servers[0]?.toolOverrides).toEqual({
      git_reset: { enabled: false },
      git_push: { enabled: false },
      git_status: { name: "status", description: "What changed", annotations: { readOnlyHint: true } },
    });
  });

  test("an entry without them has no overrides", () => {
    expect(parse({ mcpServers: { a: { command: "x" } } }).servers[0]).not.toHaveProperty("toolOverrides");
  });

  test("bad shapes and unknown keys are problems that name the place and the closest key", () => {
    const problems = problemsOf(() =>
      parse({
        mcpServers: {
          a: {
            command: "x",
            disabledTools: "git_push",
            tools: {
              t1: { enabeld: false },
              t2: { name: "has space" },
              t3: { annotations: { readonlyhint: true } },
              t4: "off",
            },
          },
        },
      }),
    );
    expect(problems).toContain("mcpServers.a.tools.t1.enabeld: unknown key (did you mean `enabled`?)");
    expect(problems).toContain(
      "mcpServers.a.tools.t3.annotations.readonlyhint: unknown key (did you mean `readOnlyHint`?)",
    );
    expect(problems.some((p) => p.startsWith("mcpServers.a.disabledTools:"))).toBe(true);
    expect(
      problems.some((p) => p.startsWith("mcpServers.a.tools.t2.name:") && p.includes("letters, digits")),
    ).toBe(true);
    expect(problems.some((p) => p.startsWith("mcpServers.a.tools.t4:"))).toBe(true);
  });

  test("a tool both in disabledTools and enabled: true is a problem, not a silent choice", () => {
    const problems = problemsOf(() =>
      parse({ mcpServers: { a: { command: "x", disabledTools: ["t"], tools: { t: { enabled: true } } } } }),
    );
    expect(problems.join("\n")).toContain("mcpServers.a.tools.t.enabled: is true, but disabledTools lists t");
  });
});
