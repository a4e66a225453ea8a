import { basename } from "node:path";

/**
 * What `mcpproxy import --snippet` prints: the entry a client needs to reach every server through
 * mcpproxy, for each file format; for a profile, the entry of that profile (stdio with
 * `serve --profile`, and its HTTP URL). Then the background service's URL with its token header,
 * for the clients that take a URL (the stdio entry attaches to the service by itself).
 */
export interface SnippetOptions {
  configPath: string;
  isExplicitConfig: boolean;
  profile?: { name: string; url: string; token?: string | undefined } | undefined;
  /** The background service: its URL (undefined until it was first started) and its token file. */
  service: { url: string | undefined; tokenPath: string };
}

export function snippet(options: SnippetOptions): string {
  const { configPath, isExplicitConfig, profile } = options;
  const self = /^mcpproxy(\.exe)?$/.test(basename(process.execPath)) ? process.execPath : "mcpproxy";
  const args = [
    "serve",
    ...(isExplicitConfig ? ["--config", configPath] : []),
    ...(profile ? ["--profile", profile.name] : []),
  ];
  const key = profile ? `mcpproxy-${profile.name}` : "mcpproxy";
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const whole = profile ? "add this to the" : "make this the whole";
  return [
    `Claude Desktop, Cursor, Windsurf, Claude Code's .mcp.json: ${whole} "mcpServers" map`,
    json({ mcpServers: { [key]: { command: self, args } } }),
    "",
    `VS Code (.vscode/mcp.json or the user mcp.json): ${whole} "servers" map`,
    json({ servers: { [key]: { type: "stdio", command: self, args } } }),
    "",
    "Claude Code, from a terminal:",
    `  claude mcp add --scope user ${key} -- ${[self, ...args].join(" ")}`,
    "",
    ...(profile
      ? [
          `Over HTTP (a running \`mcpproxy serve --transport http\`), the profile is at ${profile.url}:`,
          json({ mcpServers: { [key]: { type: "http", url: profile.url } } }),
          `  claude mcp add --scope user --transport http ${key} ${profile.url}`,
          ...(profile.token
            ? [`  (with "Authorization: Bearer <token>" in its headers; the token is in ${profile.token})`]
            : []),
          "",
        ]
      : serviceEntries(key, options.service)),
  ].join("\n");
}

/** The service's entries for the clients that take a URL (Cursor, Claude Code, VS Code). */
function serviceEntries(key: string, service: SnippetOptions["service"]): string[] {
  const intro =
    "One proxy for every client: with the background service running (`mcpproxy start`, or " +
    "`mcpproxy service install` to start it at login), the entries above attach to it by themselves.";
  if (!service.url)
    return [
      intro,
      "Clients that take a URL can use it directly: run `mcpproxy start`, then this again for its URL.",
      "",
    ];
  const headers = { Authorization: "Bearer <token>" };
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  return [
    intro,
    `Clients that take a URL (Cursor, Claude Code, VS Code) can use it directly, at ${service.url}, with the token of ${service.tokenPath}:`,
    json({ mcpServers: { [key]: { type: "http", url: service.url, headers } } }),
    `  claude mcp add --scope user --transport http ${key} ${service.url} --header "Authorization: Bearer $(cat ${service.tokenPath})"`,
    '  (VS Code: the same entry in its "servers" map.) The token lets whoever holds it use your servers: keep the file',
    "  you put it in readable by you alone.",
    "",
  ];
}
