import type { StdioServerConfig } from "../config/parse-server.ts";
import { ANCESTRY_ENV } from "./proxy-ancestry.ts";

/**
 * What a server needs to reach the network behind a corporate proxy or TLS inspection (proxies,
 * CA bundles for Node, OpenSSL, Python and curl), and to read and write text (locale, time zone,
 * temp dir). Without them `npx` servers hung or failed with SELF_SIGNED_CERT_IN_CHAIN where the
 * same command worked by hand. Every LC_* locale category is passed too.
 */
const PASSED_THROUGH_ENV = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "TEMP",
  "TMP",
] as const;

/**
 * The baseline every stdio server gets, the names the MCP SDK's `getDefaultEnvironment()` passes
 * (@modelcontextprotocol/client/stdio; child-env.test.ts holds the two equal). Written out here:
 * importing that one function evaluated the SDK's whole stdio transport in every serve (cross-spawn,
 * node:stream, node:child_process), 0.9–1.3 MiB more of the binary resident in an idle serve for a
 * list of names (docs/benchmarks.md, Start-up).
 */
const BASELINE_ENV =
  process.platform === "win32"
    ? [
        "APPDATA",
        "COMSPEC",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "PROGRAMDATA",
        "PROGRAMFILES",
        "PROGRAMFILES(X86)",
        "PROGRAMW6432",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
        "WINDIR",
      ]
    : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/** The baseline from the proxy's own environment, as the SDK takes it: a value that is a shell function (`() {…`) is left out. */
export function baselineEnvironment(): Record<string, string> {
  const baseline: Record<string, string> = {};
  for (const name of BASELINE_ENV) {
    const value = process.env[name];
    if (value !== undefined && !value.startsWith("()")) baseline[name] = value;
  }
  return baseline;
}

/** `inheritEnv: true` passes everything but the proxy's own settings: a server that is itself an mcpproxy must not take ours. */
const OWN_PREFIX = "MCPPROXY_";

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The environment of a stdio server. Never the proxy's whole environment, which may hold secrets
 * meant for other servers: the baseline (HOME, LOGNAME, PATH, SHELL, TERM, USER), then
 * PASSED_THROUGH_ENV from the proxy's environment, then what the person's `inheritEnv` names (per
 * server, or `mcpproxy.inheritEnv` for their own entries), then the server's own `env`.
 */
export function childEnvironment(
  server: Pick<StdioServerConfig, "env" | "inheritEnv">,
  env: Environment,
  ancestry?: string,
): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isPassed(name, server.inheritEnv)) passed[name] = value;
  }
  return {
    ...baselineEnvironment(),
    ...passed,
    ...server.env,
    ...(ancestry ? { [ANCESTRY_ENV]: ancestry } : {}),
  };
}

function isPassed(name: string, inherit: StdioServerConfig["inheritEnv"]): boolean {
  if ((PASSED_THROUGH_ENV as readonly string[]).includes(name) || name.startsWith("LC_")) return true;
  if (inherit === true) return !name.startsWith(OWN_PREFIX);
  return inherit?.includes(name) ?? false;
}
