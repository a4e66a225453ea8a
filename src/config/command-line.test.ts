import { describe, expect, test } from "bun:test";
import { splitCommandLine } from "./command-line.ts";

describe("splitCommandLine", () => {
  test("splits words and keeps quoted text whole, without shell expansion", () => {
    expect(splitCommandLine(`notify-send  "tools changed" 'for $USER' a\\ b ""`)).toEqual([
      "notify-send",
      "tools changed",
      "for $USER",
      "a b",
      "",
    ]);
    expect(splitCommandLine(`sh -c 'echo "$MCPPROXY_TOOLS_ADDED" >> log'`)).toEqual([
      "sh",
      "-c",
      'echo "$MCPPROXY_TOOLS_ADDED" >> log',
    ]);
    expect(splitCommandLine(`say "a \\"quoted\\" word"`)).toEqual(["say", 'a "quoted" word']);
  });

  test("an unclosed quote is an error", () => {
    expect(() => splitCommandLine(`echo "oops`)).toThrow('unclosed " quote');
  });
});
