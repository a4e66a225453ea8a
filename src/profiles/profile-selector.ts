import type { ProfileSettings } from "../config/profile-settings.ts";

/**
 * Which servers and tools a profile holds. Servers: those named in `servers`, with those carrying
 * any of `tags`; neither given, every server. Tools: of those servers, the ones matching a
 * `tools` pattern (none given, all of them), minus those matching a `!pattern`. A pattern with a
 * `/` is matched against `server/tool` (the upstream's own tool name, so a person's renaming does
 * not move a tool out of a profile); one without is matched against the public name the agent
 * sees (`github__create_issue`). `*` is any run of characters, `?` one character.
 */
export interface ProfileSelector {
  hasServer(server: string): boolean;
  hasTool(tool: { server: string; tool: string; name: string }): boolean;
}

export interface TaggedServer {
  name: string;
  tags?: readonly string[] | undefined;
}

export function globPattern(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

interface Pattern {
  regex: RegExp;
  onServerTool: boolean;
}

const patternOf = (text: string): Pattern => ({ regex: globPattern(text), onServerTool: text.includes("/") });

const matches = (pattern: Pattern, tool: { server: string; tool: string; name: string }) =>
  pattern.regex.test(pattern.onServerTool ? `${tool.server}/${tool.tool}` : tool.name);

export function createProfileSelector(
  profile: ProfileSettings,
  servers: readonly TaggedServer[],
): ProfileSelector {
  const isEveryServer = profile.servers.length === 0 && profile.tags.length === 0;
  const chosen = new Set(profile.servers);
  for (const server of servers)
    if (server.tags?.some((tag) => profile.tags.includes(tag))) chosen.add(server.name);
  const included = profile.tools.filter((text) => !text.startsWith("!")).map(patternOf);
  const excluded = profile.tools
    .filter((text) => text.startsWith("!"))
    .map((text) => patternOf(text.slice(1)));
  const hasServer = (server: string) => isEveryServer || chosen.has(server);
  return {
    hasServer,
    hasTool: (tool) =>
      hasServer(tool.server) &&
      (included.length === 0 || included.some((pattern) => matches(pattern, tool))) &&
      !excluded.some((pattern) => matches(pattern, tool)),
  };
}

/**
 * What a profile names that no configured server answers to. Warnings, not errors: servers come and
 * go at run time (an edited config, `upstream_servers`), and removing a server must not stop the
 * proxy from starting because a profile still names it; the profile then simply holds less.
 */
export function profileWarnings(
  name: string,
  profile: ProfileSettings,
  servers: readonly TaggedServer[],
): string[] {
  const known = new Set(servers.map((server) => server.name));
  const tags = new Set(servers.flatMap((server) => server.tags ?? []));
  return [
    ...profile.servers
      .filter((server) => !known.has(server))
      .map((server) => `profile ${name} names the server ${server}, which is not configured`),
    ...profile.tags
      .filter((tag) => !tags.has(tag))
      .map((tag) => `profile ${name} names the tag ${tag}, which no configured server carries`),
  ];
}
