import { describe, expect, test } from "bun:test";
import type { ExpansionProblem } from "../config/expand-env.ts";
import { parseProfiles } from "../config/profile-settings.ts";
import { createProfileSelector, globPattern, profileWarnings } from "./profile-selector.ts";

const SERVERS = [
  { name: "github", tags: ["code", "work"] },
  { name: "jira", tags: ["work"] },
  { name: "notes" },
];
const profile = (settings: { servers?: string[]; tags?: string[]; tools?: string[] }) => ({
  servers: settings.servers ?? [],
  tags: settings.tags ?? [],
  tools: settings.tools ?? [],
});
const tool = (server: string, name: string, publicName = `${server}__${name}`) => ({
  server,
  tool: name,
  name: publicName,
});

describe("profile selector", () => {
  test("no servers and no tags: every server", () => {
    const selector = createProfileSelector(profile({}), SERVERS);
    expect(SERVERS.every((server) => selector.hasServer(server.name))).toBe(true);
    expect(selector.hasServer("added-later")).toBe(true);
    expect(selector.hasTool(tool("notes", "write"))).toBe(true);
  });

  test("servers by name united with servers by tag", () => {
    const selector = createProfileSelector(profile({ servers: ["notes"], tags: ["code"] }), SERVERS);
    expect(selector.hasServer("notes")).toBe(true);
    expect(selector.hasServer("github")).toBe(true);
    expect(selector.hasServer("jira")).toBe(false);
    expect(selector.hasTool(tool("jira", "create_issue"))).toBe(false);
  });

  test("tool patterns filter within the servers; `!` leaves tools out", () => {
    const selector = createProfileSelector(
      profile({ tags: ["work"], tools: ["github__*", "jira/get_*", "!github__delete_*"] }),
      SERVERS,
    );
    expect(selector.hasTool(tool("github", "create_issue"))).toBe(true);
    expect(selector.hasTool(tool("github", "delete_repo"))).toBe(false);
    expect(selector.hasTool(tool("jira", "get_issue"))).toBe(true);
    expect(selector.hasTool(tool("jira", "create_issue"))).toBe(false);
    // A pattern never reaches past the servers.
    expect(selector.hasTool(tool("notes", "github__x", "github__x"))).toBe(false);
  });

  test("only exclusions: everything else stays", () => {
    const selector = createProfileSelector(profile({ tools: ["!*/delete_*"] }), SERVERS);
    expect(selector.hasTool(tool("notes", "write"))).toBe(true);
    expect(selector.hasTool(tool("notes", "delete_all"))).toBe(false);
  });

  test("server/tool matches the upstream's name, a bare pattern the public name (a renamed tool)", () => {
    const renamed = tool("github", "create_issue", "open_ticket");
    expect(createProfileSelector(profile({ tools: ["github/create_*"] }), SERVERS).hasTool(renamed)).toBe(
      true,
    );
    expect(createProfileSelector(profile({ tools: ["github__create_*"] }), SERVERS).hasTool(renamed)).toBe(
      false,
    );
    expect(createProfileSelector(profile({ tools: ["open_*"] }), SERVERS).hasTool(renamed)).toBe(true);
  });

  test("globs: * and ? only; other characters are literal", () => {
    expect(globPattern("a.b*").test("a.bcd")).toBe(true);
    expect(globPattern("a.b*").test("axbcd")).toBe(false);
    expect(globPattern("t?ol").test("tool")).toBe(true);
    expect(globPattern("t?ol").test("tooool")).toBe(false);
    expect(globPattern("(x)+").test("(x)+")).toBe(true);
  });

  test("tags are read from the servers as they are now", () => {
    const settings = profile({ tags: ["work"] });
    expect(createProfileSelector(settings, SERVERS).hasServer("notes")).toBe(false);
    expect(
      createProfileSelector(settings, [...SERVERS, { name: "notes", tags: ["work"] }]).hasServer("notes"),
    ).toBe(true);
  });

  test("names no server answers to are warnings", () => {
    expect(
      profileWarnings("p", profile({ servers: ["github", "gone"], tags: ["work", "none"] }), SERVERS),
    ).toEqual([
      "profile p names the server gone, which is not configured",
      "profile p names the tag none, which no configured server carries",
    ]);
  });
});

describe("parseProfiles", () => {
  const parse = (raw: unknown) => {
    const problems: ExpansionProblem[] = [];
    return { profiles: parseProfiles(raw, problems), problems };
  };

  test("defaults each key to an empty list", () => {
    expect(parse({ a: {}, "b.c_d-1": { servers: ["x"] } })).toEqual({
      profiles: {
        a: { servers: [], tags: [], tools: [] },
        "b.c_d-1": { servers: ["x"], tags: [], tools: [] },
      },
      problems: [],
    });
  });

  test("names must be URL-safe; entries objects; keys known; patterns sound", () => {
    const { profiles, problems } = parse({
      "a b": {},
      "-x": {},
      list: [],
      typo: { tool: ["x"] },
      bad: { tools: ["a/b/c", "!", ""], tags: [3] },
    });
    expect(profiles).toEqual({});
    expect(problems.map((problem) => problem.path).sort()).toEqual(
      [
        "mcpproxy.profiles.a b",
        "mcpproxy.profiles.-x",
        "mcpproxy.profiles.list",
        "mcpproxy.profiles.typo.tool",
        "mcpproxy.profiles.bad.tags.0",
        "mcpproxy.profiles.bad.tools.0",
        "mcpproxy.profiles.bad.tools.1",
        "mcpproxy.profiles.bad.tools.2",
      ].sort(),
    );
    expect(problems.find((problem) => problem.path.endsWith("typo.tool"))?.message).toContain("`tools`");
  });

  test("not an object", () => {
    expect(parse([]).problems[0]?.path).toBe("mcpproxy.profiles");
    expect(parse(undefined)).toEqual({ profiles: {}, problems: [] });
  });
});
