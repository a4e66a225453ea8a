import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { parse } from "jsonc-parser";
import {
  cleanupAfterEach,
  connectStdio,
  FIXTURE_TOOLS,
  fixtureEntry,
  retrieve,
  runCli,
  type Sandbox,
} from "./helpers.ts";

/**
 * A variable a server needs and that is not set, through the compiled binary: that server fails
 * alone and says which variable and where to set it; the others serve, index and pass doctor; the
 * command line can still disable or remove it. `import` writes such variables from VS Code's
 * `${input:…}` and `${env:…}`, and says what to fill in.
 */
setDefaultTimeout(60_000);
const scope = cleanupAfterEach();

const TOKEN = "MCPPROXY_TEST_UNSET_TOKEN";
const HOST = "MCPPROXY_TEST_UNSET_HOST";

function brokenSandbox(): { sandbox: Sandbox; flags: string[] } {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({
    mcpServers: {
      good: fixtureEntry(),
      "needs-token": fixtureEntry({ args: ["--name", "needs-token"], env: { TOKEN: `\${${TOKEN}}` } }),
      remote: { url: `https://\${${HOST}}/mcp` },
    },
  });
  return { sandbox, flags: ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir] };
}

describe("a server whose variable is not set", () => {
  test("serve: it fails alone, naming the variable and where to set it; the others answer", async () => {
    const { sandbox } = brokenSandbox();
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const found = await retrieve(proxy.client, "echo a message back");
    expect(found.tools.map((tool) => tool.name)).toContain("good__echo");
    const echoed = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "good__echo", arguments: { message: "still here" } },
    });
    expect(JSON.stringify(echoed.content)).toContain("still here");

    const listed = await proxy.client.callTool(
      { name: "upstream_servers", arguments: { operation: "list" } },
      CallToolResultSchema,
    );
    const rows = (listed.structuredContent as { servers: { name: string; state: string; error?: string }[] })
      .servers;
    const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
    expect(byName.good).toMatchObject({ state: "connected", tools: FIXTURE_TOOLS });
    expect(byName["needs-token"]?.state).toBe("failed");
    expect(byName["needs-token"]?.error).toContain(
      `mcpServers.needs-token.env.TOKEN — environment variable ${TOKEN} is not set: set it where mcpproxy starts`,
    );
    expect(byName.remote?.state).toBe("failed");
    expect(byName.remote?.error).toContain(`environment variable ${HOST} is not set`);
    expect(proxy.stderr()).toContain(`environment variable ${TOKEN} is not set`);
    // Said as what it is: never started, not a server that could not be reached.
    expect(proxy.stderr()).not.toContain("could not connect");
  });

  test("index and doctor name the variable and go on with the others", async () => {
    const { sandbox, flags } = brokenSandbox();
    const indexed = await runCli(["index", ...flags], sandbox.env());
    expect(indexed.code).toBe(1); // a server failed
    expect(indexed.stdout).toContain(`ok      good: ${FIXTURE_TOOLS} tools`);
    expect(indexed.stdout).toMatch(
      new RegExp(
        `FAILED {2}needs-token: .*mcpServers\\.needs-token\\.env\\.TOKEN — environment variable ${TOKEN} is not set`,
      ),
    );
    expect(indexed.stdout).toContain(`FAILED  remote: `);

    const doctor = await runCli(["doctor", "--json", ...flags], sandbox.env());
    expect(doctor.code).toBe(1);
    const findings = (
      JSON.parse(doctor.stdout) as {
        findings: { subject: string; status: string; detail: string; fix?: string }[];
      }
    ).findings;
    const bySubject = Object.fromEntries(findings.map((finding) => [finding.subject, finding]));
    expect(bySubject.good?.status).toBe("ok");
    expect(bySubject["needs-token"]).toMatchObject({
      status: "fail",
      fix: "set what it names where mcpproxy starts, or leave it out: `mcpproxy servers disable needs-token`",
    });
    expect(bySubject["needs-token"]?.detail).toContain(`environment variable ${TOKEN} is not set`);
    expect(findings.find((finding) => finding.subject === sandbox.configPath)?.status).toBe("ok");

    // Set, it starts like any other.
    const withToken = await runCli(
      ["index", ...flags],
      sandbox.env({ [TOKEN]: "t0k", [HOST]: "127.0.0.1:9" }),
    );
    expect(withToken.stdout).toContain(`ok      needs-token: ${FIXTURE_TOOLS} tools`);
  });

  test("the command line can still disable and remove it", async () => {
    const { sandbox, flags } = brokenSandbox();
    const listed = await runCli(["servers", "list", ...flags], sandbox.env());
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(
      "needs-token  (not started: a variable it needs is not set; see mcpproxy doctor) stdio",
    );
    const disabled = await runCli(["servers", "disable", "needs-token", ...flags], sandbox.env());
    expect(disabled.stderr).toBe("");
    expect(disabled.code).toBe(0);
    const removed = await runCli(["servers", "remove", "remote", ...flags], sandbox.env());
    expect(removed.code).toBe(0);
    const config = parse(readFileSync(sandbox.configPath, "utf8")) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    expect(config.mcpServers["needs-token"]?.enabled).toBe(false);
    expect(config.mcpServers.remote).toBeUndefined();
    const indexed = await runCli(["index", ...flags], sandbox.env());
    expect(indexed.code).toBe(0);
  });
});

describe("import of VS Code's variables", () => {
  test("${env:X} becomes ${X} and ${input:id} a variable to set, each with a note; the imported servers that lack them fail alone", async () => {
    const sandbox = scope.sandbox();
    const project = join(sandbox.dir, "project");
    mkdirSync(join(project, ".vscode"), { recursive: true });
    writeFileSync(
      join(project, ".vscode", "mcp.json"),
      JSON.stringify({
        inputs: [{ type: "promptString", id: "api-key", description: "The API key", password: true }],
        servers: {
          keyed: {
            type: "stdio",
            ...fixtureEntry({ args: ["--name", "keyed"] }),
            env: { KEY: "${input:api-key}" },
          },
          regional: {
            type: "stdio",
            ...fixtureEntry({ args: ["--name", "regional"] }),
            env: { REGION: "${env:MCPPROXY_TEST_REGION}" },
          },
          plain: { type: "stdio", ...fixtureEntry({ args: ["--name", "plain"] }) },
        },
      }),
    );
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    writeFileSync(sandbox.configPath, '{ "mcpServers": {} }\n');
    const imported = await runCli(
      ["import", "--from", "vscode", ...flags.slice(0, 2)],
      sandbox.env(),
      project,
    );
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(
      'note: set API_KEY in the environment (VS Code asked for it as input "api-key": The API key); until it is set, this server does not start',
    );
    expect(imported.stdout).toContain(
      "note: ${env:MCPPROXY_TEST_REGION} became ${MCPPROXY_TEST_REGION}: mcpproxy reads MCPPROXY_TEST_REGION from the environment it starts in; it is not set here, and until it is this server does not start",
    );
    const servers = (
      parse(readFileSync(sandbox.configPath, "utf8")) as { mcpServers: Record<string, { env?: object }> }
    ).mcpServers;
    expect(servers.keyed?.env).toEqual({ KEY: "${API_KEY}" });
    expect(servers.regional?.env).toEqual({ REGION: "${MCPPROXY_TEST_REGION}" });

    const indexed = await runCli(["index", ...flags], sandbox.env());
    expect(indexed.stdout).toContain(`ok      plain: ${FIXTURE_TOOLS} tools`);
    expect(indexed.stdout).toContain("FAILED  keyed:");
    expect(indexed.stdout).toContain("environment variable API_KEY is not set");
    expect(indexed.stdout).toContain("environment variable MCPPROXY_TEST_REGION is not set");
  });
});
