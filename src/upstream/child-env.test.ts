import { afterEach, describe, expect, test } from "bun:test";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { baselineEnvironment, childEnvironment } from "./child-env.ts";

describe("the baseline environment of a stdio server", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });

  test("is the MCP SDK's getDefaultEnvironment(), names and values", () => {
    process.env.SHELL = "/bin/sh";
    process.env.TERM = "() { :; }; echo pwned";
    process.env.LOGNAME = "someone";
    expect(baselineEnvironment()).toEqual(getDefaultEnvironment());
    expect(baselineEnvironment().TERM).toBeUndefined();
    delete process.env.LOGNAME;
    expect(baselineEnvironment()).toEqual(getDefaultEnvironment());
  });

  test("comes first: the server's own env overrides it", () => {
    process.env.HOME = "/home/proxy";
    const env = childEnvironment({ env: { HOME: "/srv/home" } }, {});
    expect(env.HOME).toBe("/srv/home");
    expect(env.PATH).toBe(process.env.PATH!);
  });
});
