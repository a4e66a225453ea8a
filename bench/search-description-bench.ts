#!/usr/bin/env bun
/**
 * How large retrieve_tools' description gets (server/tools/search-description.ts) with 3, 20 and 100
 * servers of the eval catalog (etom-msc-bench.json, MCPPROXY_EVAL_SET: real servers' descriptions,
 * used as their instructions, and their tools), in process. Tokens are estimated as characters / 4
 * (no tokenizer: the ratio is the usual one for English text and JSON). For scale, beside each: what
 * the same servers' tools would cost listed one by one (name, description and input schema as
 * JSON), and how long building the text takes from cold (the poisoning scan of every quoted text
 * included). The servers are taken largest first (most tools), then by name, so the figures
 * replay. Then, on a real catalog (SQLite, search index) holding the whole eval catalog: how long
 * the proxy's once-a-second look takes when nothing changed (the catalog's version) and when
 * something did (the stamp of every approved tool), and a rebuild from cold (the definitions of the
 * servers given a line read, the lines built). Figures, not pass/fail.
 *
 *   bun bench/search-description-bench.ts [--catalog FILE.json]   (default: MCPPROXY_EVAL_SET)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  createDescriptionBuilder,
  describedServers,
  descriptionStamp,
} from "../src/app/description-sketches.ts";
import { createLook, type DescriptionWatchOptions } from "../src/app/description-watch.ts";
import type { ServerConfig } from "../src/config/parse-server.ts";
import { openToolCatalog } from "../src/index/tool-catalog.ts";
import { silentLogger } from "../src/log.ts";
import { serverMentions } from "../src/security/poisoning-scan.ts";
import { builtinToolDefinitions } from "../src/server/tools/builtin-tools.ts";
import { describeServers, type ServerSketch, serverLine } from "../src/server/tools/search-description.ts";
import { loadEvalCatalog, requireEvalSet } from "./eval-catalog.ts";

const { values } = parseArgs({
  options: { catalog: { type: "string" } },
});
const catalogFile = requireEvalSet(values.catalog);
const catalog = loadEvalCatalog(catalogFile);
const byServer = new Map<string, typeof catalog.tools>();
for (const tool of catalog.tools) byServer.set(tool.server, [...(byServer.get(tool.server) ?? []), tool]);
const ordered = [...byServer].sort(([a, x], [b, y]) => y.length - x.length || (a < b ? -1 : 1));

const tokens = (chars: number) => Math.round(chars / 4);
const say = (line: string) => process.stdout.write(`${line}\n`);
const fixedChars = builtinToolDefinitions(10)[0]!.description!.length;
say(`catalog: ${catalogFile} (${byServer.size} servers, ${catalog.tools.length} tools)`);
say(`fixed text of the description: ${fixedChars} chars, ~${tokens(fixedChars)} tokens (chars/4)\n`);
say(
  "servers | tools | description chars | ~tokens | of which servers part | lines named | build ms (cold) | tools listed directly ~tokens",
);
for (const count of [3, 20, 100]) {
  const chosen = ordered.slice(0, count);
  const sketches: ServerSketch[] = chosen.map(([name, tools]) => ({
    name,
    instructions: catalog.servers?.[name]?.description,
    tools: tools.map((tool) => ({ name: tool.name, description: tool.description })),
  }));
  const started = performance.now();
  const mentions = serverMentions(sketches.map((sketch) => sketch.name));
  const servers = describeServers(sketches, (sketch) => serverLine(sketch, mentions));
  const ms = performance.now() - started;
  const description = builtinToolDefinitions(10, servers)[0]!.description!;
  const direct = chosen
    .flatMap(([, tools]) => tools)
    .reduce(
      (sum, tool) =>
        sum +
        JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })
          .length,
      0,
    );
  const named = servers.split("\n").filter((line) => line.startsWith("- ")).length;
  say(
    [
      count,
      sketches.reduce((sum, sketch) => sum + sketch.tools.length, 0),
      description.length,
      tokens(description.length),
      servers.length,
      named,
      ms.toFixed(1),
      tokens(direct),
    ].join(" | "),
  );
  if (count === 3) say(`\n${servers}\n`);
}

const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-description-bench-"));
try {
  const real = await openToolCatalog({
    dataDir,
    toolNameLimit: 64,
    reservedNames: new Set(),
    logger: silentLogger,
  });
  for (const [server, tools] of ordered) {
    await real.syncServer(
      server,
      tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: (tool.inputSchema ?? { type: "object" }) as { type: "object" },
      })),
    );
    real.instructions?.put(server, catalog.servers?.[server]?.description);
  }
  // One list, as the server manager hands out until the config changes.
  const configured = ordered.map(([name]) => ({ name, enabled: true }) as ServerConfig);
  const options: DescriptionWatchOptions = {
    catalog: real,
    servers: () => configured,
    changes: { toolsChanged: () => undefined },
    logger: silentLogger,
  };
  const median = (work: () => unknown, runs: number) => {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      work();
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!.toFixed(1);
  };
  descriptionStamp(options); // names assigned, statements prepared
  const look = createLook(options);
  look();
  say(
    `\nreal catalog, ${ordered.length} servers, ${catalog.tools.length} tools (no approval policy): ` +
      `a look with nothing changed ${median(look, 21)} ms median; ` +
      `a look after a change (stamp) ${median(() => descriptionStamp(options), 21)} ms median; ` +
      `a rebuild from cold ${median(() => createDescriptionBuilder()(describedServers(options)), 5)} ms median`,
  );
  await real.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
