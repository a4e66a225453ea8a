import { describe, expect, test } from "bun:test";
import { commandHelp, wrapText } from "./command.ts";

describe("help text", () => {
  test("wraps at word boundaries with a hanging indent, never cutting a word", () => {
    const text = "one two three four five six seven eight nine ten";
    // Every line, its indent included, fits in 20 columns.
    expect(wrapText(text, 20, 4)).toBe("one two three\n    four five six\n    seven eight nine\n    ten");
    expect(wrapText("a incomprehensibilities b", 10, 0)).toBe("a\nincomprehensibilities\nb");
  });

  test("a long option description wraps under itself, and nothing is left out", () => {
    const help = commandHelp(
      {
        name: "demo",
        summary: "Demo.",
        usage: "mcpproxy demo",
        options: { long: { type: "string", help: `--long X           ${"word ".repeat(40).trim()} end` } },
        load: async () => async () => 0,
      },
      80,
    );
    const lines = help.split("\n").filter((line) => line.includes("word") || line.includes("end"));
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    for (const line of lines.slice(1)) expect(line.startsWith(" ".repeat(21))).toBe(true);
    expect(lines.join(" ").match(/word/g)).toHaveLength(40);
    expect(help).toContain("end\n");
  });
});
