import { NAME_SEPARATOR } from "../../index/tool-naming.ts";

/**
 * Resources and prompts of every upstream under one proxy, without collisions:
 *  - a resource URI becomes `mcpproxy://<server>/<the upstream's URI as it is>`, the server name
 *    percent-encoded; a URI template the same way, so a client expands the template's variables
 *    in the upstream's part and the proxy can still tell whose it is;
 *  - a prompt or resource name becomes `<server>__<name>`, as tool names do.
 * The upstream's URI is kept whole after the prefix (not encoded): clients show it, and a template's
 * `{variables}` must stay expandable.
 */
export const FEDERATED_SCHEME = "mcpproxy:";
const PREFIX = `${FEDERATED_SCHEME}//`;

function federatedUri(server: string, uri: string): string {
  return `${PREFIX}${encodeURIComponent(server)}/${uri}`;
}

/** The server and its own URI, or undefined for a URI this proxy did not hand out. */
function upstreamUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(PREFIX)) return undefined;
  const rest = uri.slice(PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  try {
    return { server: decodeURIComponent(rest.slice(0, slash)), uri: rest.slice(slash + 1) };
  } catch {
    return undefined;
  }
}

function federatedName(server: string, name: string): string {
  return `${server}${NAME_SEPARATOR}${name}`;
}

/** The server and its own name: the longest configured server name that prefixes it wins. */
function upstreamName(name: string, servers: Iterable<string>): { server: string; name: string } | undefined {
  let best: string | undefined;
  for (const server of servers) {
    if (name.startsWith(`${server}${NAME_SEPARATOR}`) && (!best || server.length > best.length))
      best = server;
  }
  return best === undefined
    ? undefined
    : { server: best, name: name.slice(best.length + NAME_SEPARATOR.length) };
}

/**
 * How the resources and prompts of upstreams are named to a client: federated (above), or, for
 * `serve --passthrough SERVER`, under the one server's own names and URIs.
 */
export interface Naming {
  uri(server: string, uri: string): string;
  /** The server and its own URI, or undefined for a URI this proxy did not hand out. */
  fromUri(uri: string): { server: string; uri: string } | undefined;
  name(server: string, name: string): string;
  fromName(name: string, servers: Iterable<string>): { server: string; name: string } | undefined;
}

export const FEDERATED_NAMING: Naming = {
  uri: federatedUri,
  fromUri: upstreamUri,
  name: federatedName,
  fromName: upstreamName,
};

/** Every name and URI is the one server's own, unchanged both ways. */
export function passthroughNaming(server: string): Naming {
  return {
    uri: (_, uri) => uri,
    fromUri: (uri) => ({ server, uri }),
    name: (_, name) => name,
    fromName: (name) => ({ server, name }),
  };
}
