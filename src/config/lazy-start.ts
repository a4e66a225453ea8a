import * as v from "valibot";
import type { ExpansionProblem } from "./expand-env.ts";
import { closestKey } from "./known-keys.ts";
import type { ServerConfig } from "./parse-server.ts";

/**
 * Which servers `serve` starts with the proxy and which wait for the first call that needs them.
 * Three layers, the most specific winning: `mcpproxy.lazy` (the default for every server, false),
 * a server's own `lazy`, and `mcpproxy.preconnect` (names started at start whatever else says): a
 * proxy with thirty servers can be lazy by default and still have the two it always uses ready.
 */
export const PreconnectSchema = v.array(
  v.pipe(v.string("must be a server name"), v.nonEmpty("must not be empty")),
  'must be an array of server names (["github", …])',
);

/**
 * The servers with `lazy` resolved (true, or absent), and a problem for each preconnect name that
 * is not a configured server, with the closest name that is.
 */
export function resolveLazyStarts(
  servers: readonly ServerConfig[],
  options: { lazy: boolean; preconnect: readonly string[] },
  problems: ExpansionProblem[],
): ServerConfig[] {
  const names = servers.map((server) => server.name);
  options.preconnect.forEach((name, index) => {
    if (names.includes(name)) return;
    const closest = closestKey(name, names);
    problems.push({
      path: `mcpproxy.preconnect.${index}`,
      message:
        `no server is named "${name}"` +
        (closest
          ? ` (did you mean "${closest}"?)`
          : names.length > 0
            ? ` (servers: ${names.join(", ")})`
            : ""),
    });
  });
  const preconnect = new Set(options.preconnect);
  return servers.map((server) => {
    if (!preconnect.has(server.name) && (server.lazy ?? options.lazy)) return { ...server, lazy: true };
    // Absent rather than false: a server's config is compared whole to tell whether it changed.
    const eager = { ...server };
    delete eager.lazy;
    return eager;
  });
}
