import { describe, expect, test } from "bun:test";
import { type Logger, silentLogger } from "../log.ts";
import { createSessionRegistry } from "./session-registry.ts";
import { sessionlessNote } from "./session-routing.ts";

/** A logger that keeps its info lines. */
function keepingLogger(lines: string[]): Logger {
  return { ...silentLogger, info: (message) => void lines.push(message), child: () => keepingLogger(lines) };
}

describe("a sessionless (2026-07-28) client under dynamic or auto routing", () => {
  test("is logged once per registry (once per serve), whatever the mode and however many searches", () => {
    const lines: string[] = [];
    const registry = createSessionRegistry(keepingLogger(lines));
    registry.sessionless("auto");
    registry.sessionless("auto");
    registry.sessionless("dynamic");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("--routing auto needs a session");
    expect(lines[0]).toContain("call_tool");
    expect(lines[0]).toContain("--routing all");
  });

  test("the agent's note names the mode and the way to call", () => {
    expect(sessionlessNote("dynamic")).toContain("dynamic routing does not apply");
    expect(sessionlessNote("auto")).toContain("Call them with call_tool");
  });
});
