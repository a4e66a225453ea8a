// The second half of the conformance auth client: calls every tool `index` found on the scenario's
// server through `mcpproxy serve` (stdio), as an agent would, so scenarios that judge a call (step-up
// on a 403 insufficient_scope) see one. Exits 3 when a call says the server needs a login again.
//
//   node call-tools.mjs MCPPROXY CONFIG DATA_DIR
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [binary, config, dataDir] = process.argv.slice(2);
const common = ["--config", config, "--data-dir", dataDir];
let tools = [];
try {
  ({ tools } = JSON.parse(
    execFileSync(binary, ["tools", "conformance", "--json", ...common], { encoding: "utf8" }),
  ));
} catch {
  // No tool indexed: nothing to call.
}
const client = new Client({ name: "mcpproxy-conformance-auth", version: "1.0.0" });
await client.connect(
  new StdioClientTransport({ command: binary, args: ["serve", ...common], stderr: "inherit" }),
);
let needsLogin = false;
for (const tool of tools) {
  const result = await client.callTool({ name: "call_tool", arguments: { name: tool.name, arguments: {} } });
  const text = (result.content ?? []).map((part) => part.text ?? "").join(" ");
  if (result.isError && /needs a login/.test(text)) needsLogin = true;
  process.stderr.write(`${tool.name}: ${result.isError ? "error: " : ""}${text.slice(0, 200)}\n`);
}
await client.close();
process.exit(needsLogin ? 3 : 0);
