/**
 * The import rules of the code (docs/architecture.md, "Folders and what each may import"), checked by
 * `npm run lint` so they hold without a reviewer. Type-only imports count: a cycle of types is a
 * cycle of design. Tests next to the code may reach across layers (they are not in the binary); the
 * cycle rule holds for them too.
 */
const FEATURES =
  "app|cli|service|console|approvals|tray|doctor|import|server|routing|profiles|plugins|index|upstream|auth|limits|stats|tracing|eval";
const notTest = "\\.test\\.ts$";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "A module never imports, even for a type, one that imports it back.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "store-imports-nothing-above-it",
      comment:
        "store/ is the storage layer: it may use config/, security/ and the ground files, not a feature folder.",
      severity: "error",
      from: { path: "^src/store/", pathNot: notTest },
      to: { path: `^src/(${FEATURES})/` },
    },
    {
      name: "ground-imports-no-feature",
      comment:
        "The ground every layer stands on (config/, security/ and the files at the top of src/) imports no feature folder and not store/.",
      severity: "error",
      from: { path: "^src/(config/|security/|[a-z-]+\\.ts$)", pathNot: notTest },
      to: { path: `^src/(${FEATURES}|store)/` },
    },
    {
      name: "security-errors-log-below-config",
      comment: "security/, errors.ts and log.ts are below config/: everything may use them.",
      severity: "error",
      from: { path: "^src/(security/|errors\\.ts$|log\\.ts$)", pathNot: notTest },
      to: { path: "^src/config/" },
    },
    {
      name: "database-clients-only-in-store",
      comment: "Only src/store/ imports a database client (bun:sqlite, postgres).",
      severity: "error",
      from: { path: "^(src|main\\.ts)", pathNot: ["^src/store/", notTest] },
      to: { path: "^(bun:sqlite|postgres)$|node_modules/postgres/" },
    },
    {
      name: "mcp-sdk-only-in-server-upstream-auth",
      comment: "Only src/server/, src/upstream/ and src/auth/ (its OAuth provider) import the MCP SDK.",
      severity: "error",
      from: { path: "^(src|main\\.ts)", pathNot: ["^src/(server|upstream|auth)/", notTest] },
      to: { path: "@modelcontextprotocol/" },
    },
    {
      name: "layers-point-down",
      comment:
        "The domain (index/, upstream/, limits/, stats/, tracing/) never imports the MCP surface (server/, routing/, profiles/, plugins/) or the wiring (app/, cli/, doctor/, import/); the MCP surface never imports the wiring.",
      severity: "error",
      from: {
        path: "^src/(index|upstream|limits|stats|tracing|server|routing|profiles|plugins)/",
        pathNot: notTest,
      },
      to: { path: "^src/(app|cli|service|console|approvals|doctor|import)/" },
    },
    {
      name: "console-only-from-app",
      comment:
        "The console (src/console/) is mounted by serve over HTTP (app/serve-http.ts); nothing below the wiring reaches it.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/(app|console)/", notTest] },
      to: { path: "^src/console/" },
    },
    {
      name: "approvals-from-the-wiring",
      comment:
        "What waits for a person and approving it (src/approvals/) is called by the CLI and the console alone.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/(cli|console|approvals)/", notTest] },
      to: { path: "^src/approvals/" },
    },
    {
      name: "tray-only-from-cli",
      comment:
        "The tray (src/tray/) is run by `mcpproxy tray`, which the service starts as a command of its own.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/(cli|tray)/", notTest] },
      to: { path: "^src/tray/" },
    },
    {
      name: "tray-talks-to-the-service-over-http",
      comment:
        "The tray reaches the service only through its HTTP API: it imports no part of the proxy (only the ground, and the reader of embedded files).",
      severity: "error",
      from: { path: "^src/tray/", pathNot: notTest },
      to: {
        path: `^src/(${FEATURES}|store)/`,
        pathNot: ["^src/tray/", "^src/index/embedders/packed-file\\.ts$"],
      },
    },
    {
      name: "service-only-from-cli",
      comment:
        "service/ (the background service, its units and the stdio bridge) sits between cli/ and app/: only cli/ imports it.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/(cli|service)/", notTest] },
      to: { path: "^src/service/" },
    },
    {
      name: "domain-below-the-mcp-surface",
      comment:
        "The domain (index/, upstream/, limits/, stats/, tracing/) never imports server/, routing/, profiles/ or plugins/.",
      severity: "error",
      from: { path: "^src/(index|upstream|limits|stats|tracing)/", pathNot: notTest },
      to: { path: "^src/(server|routing|profiles|plugins)/" },
    },
    {
      name: "cli-only-from-main",
      comment: "Only main.ts (and cli/ itself) imports cli/.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/cli/", notTest] },
      to: { path: "^src/cli/" },
    },
    {
      name: "no-barrels",
      comment: "No index.ts barrels: import the module you mean.",
      severity: "error",
      from: {},
      to: { path: "^src/index\\.ts$|^src/.*/index\\.ts$" },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API for the cruiser to parse with; swc parses TypeScript and keeps type imports.
    parser: "swc",
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
  },
};
