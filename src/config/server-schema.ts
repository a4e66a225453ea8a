import * as v from "valibot";
import { serverLimitKeys } from "./limit-settings.ts";
import { PROFILE_NAME } from "./profile-settings.ts";
import { jsonObject } from "./value-schemas.ts";

/**
 * The schema of one server entry. Server entries follow the `mcpServers` map of Claude Desktop,
 * Cursor and VS Code so users can paste their existing config; unknown keys in a server entry are
 * ignored for that reason (the proxy's own `mcpproxy` section, settings-schema.ts, is strict). The
 * keys every entry may carry, then a stdio server's (a command) and an HTTP server's (a URL, OAuth);
 * parse-server.ts reads an entry with them.
 */

const stringMap = jsonObject(
  v.record(v.string(), v.string("must be a string")),
  "must be an object of strings",
);
const timeoutMs = v.pipe(
  v.number("must be a number of milliseconds"),
  v.integer("must be a whole number of milliseconds"),
  v.minValue(100, "must be at least 100"),
  v.maxValue(3_600_000, "must be at most 3600000 (one hour)"),
);

/** One tool's override; its unknown keys are reported by parse-server.ts with a suggestion. */
const ToolOverrideSchema = jsonObject(
  v.object({
    enabled: v.optional(v.boolean("must be true or false")),
    name: v.optional(
      v.pipe(
        v.string("must be a string"),
        v.regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, `_` or `-`"),
      ),
    ),
    description: v.optional(v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty"))),
    annotations: v.optional(
      jsonObject(
        v.object({
          title: v.optional(v.string("must be a string")),
          readOnlyHint: v.optional(v.boolean("must be true or false")),
          destructiveHint: v.optional(v.boolean("must be true or false")),
          idempotentHint: v.optional(v.boolean("must be true or false")),
          openWorldHint: v.optional(v.boolean("must be true or false")),
        }),
        "must be an object of tool annotations",
      ),
    ),
  }),
  'must be an object such as {"enabled": false} or {"description": "…"}',
);
export const TOOL_OVERRIDE_KEYS = ["enabled", "name", "description", "annotations"] as const;
export const TOOL_ANNOTATION_KEYS = [
  "title",
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
] as const;

const commonServerKeys = {
  enabled: v.optional(v.boolean("must be true or false")),
  /** Cline and Roo write `disabled: true`; accepted so their configs paste unchanged. */
  disabled: v.optional(v.boolean("must be true or false")),
  /** How long connecting (initialize + first tools/list) may take. */
  timeoutMs: v.optional(timeoutMs),
  /** How long one call may go without an answer or a progress notification. */
  callTimeoutMs: v.optional(timeoutMs),
  /** What a changed or new tool gets: quarantined until approved (`pin`), or accepted and logged (`auto`). */
  trust: v.optional(v.picklist(["pin", "auto"], 'must be "pin" or "auto"')),
  /** `false`: calls are not checked against the tools' input schemas (for servers with sloppy schemas). */
  validateArguments: v.optional(v.boolean("must be true or false")),
  /** Started on the first call that needs it, not with the proxy; its tools are searchable from the saved index. */
  lazy: v.optional(v.boolean("must be true or false")),
  /**
   * A failed read-only call of its tools is retried on a read-only alternative, and its tools may be
   * such alternatives (fallback-retry.ts). Default: `mcpproxy.autoRetryFallback`. A person's setting only.
   */
  autoRetryFallback: v.optional(v.boolean("must be true or false")),
  /** Hold every tool of this server for `mcpproxy approve` on first sight (servers an agent adds get it). */
  quarantined: v.optional(v.boolean("must be true or false")),
  /**
   * Sampling, elicitation and roots requests the server makes outside any call are relayed (to a
   * session that called it) instead of refused.
   */
  relayOutsideCalls: v.optional(v.boolean("must be true or false")),
  /** The most tools this server may list (all pages); more fails this server alone. Default: `mcpproxy.maxTools`. */
  maxTools: v.optional(
    v.pipe(
      v.number("must be a whole number from 1 to 1000000"),
      v.integer("must be a whole number from 1 to 1000000"),
      v.minValue(1, "must be a whole number from 1 to 1000000"),
      v.maxValue(1_000_000, "must be a whole number from 1 to 1000000"),
    ),
  ),
  /** The most bytes its whole tool list may take (all pages). Default: `mcpproxy.maxToolListBytes`. */
  maxToolListBytes: v.optional(
    v.pipe(
      v.number("must be a whole number of bytes from 1024 to 1073741824"),
      v.integer("must be a whole number of bytes from 1024 to 1073741824"),
      v.minValue(1024, "must be a whole number of bytes from 1024 to 1073741824"),
      v.maxValue(1024 ** 3, "must be a whole number of bytes from 1024 to 1073741824"),
    ),
  ),
  /** Call limits (src/limits/): a person's settings, never an agent's. */
  ...serverLimitKeys,
  /** The upstream's tools this proxy hides (Cline's and Roo Code's key): a person's setting only. */
  disabledTools: v.optional(
    v.array(
      v.pipe(v.string("must be a tool name"), v.nonEmpty("must not be empty")),
      "must be an array of the server's tool names",
    ),
  ),
  /** A person's overrides of the server's tools, by the upstream's tool name (tool-overrides.ts). */
  tools: v.optional(jsonObject(v.record(v.string(), ToolOverrideSchema), "must be an object of tool names")),
  /** Labels a profile may select the server by (`mcpproxy.profiles`): a person's setting only. */
  tags: v.optional(
    v.array(
      v.pipe(
        v.string("must be a tag"),
        v.regex(
          PROFILE_NAME,
          "must be letters, digits, '.', '_' or '-' (at most 64), starting with a letter or digit",
        ),
      ),
      "must be an array of tags",
    ),
  ),
  /** Set by `mcpproxy approve`: the hash of the launch spec a person approved. */
  approved: v.optional(v.string("must be a string")),
  /** What the server gets for roots/list outside a call: directories (paths or file:// URIs). */
  roots: v.optional(
    v.array(
      v.pipe(v.string("must be a path or a file:// URI"), v.nonEmpty("must not be empty")),
      "must be an array of paths or file:// URIs",
    ),
  ),
};

/**
 * Which of the person's environment variables a stdio server gets beyond the baseline and the
 * network/CA/locale set (src/upstream/child-env.ts): `true` for all of them, or their names. Per
 * server, or `mcpproxy.inheritEnv` for every server the person wrote. A person's setting only:
 * an agent cannot write it, and it is part of the launch spec a person approves.
 */
export const InheritEnvSchema = v.union(
  [
    v.boolean(),
    v.array(
      v.pipe(
        v.string("must be a variable name"),
        v.regex(/^[^=\0]+$/, "must be a variable name (no `=`, not empty)"),
      ),
    ),
  ],
  'must be true, false or a list of variable names (["HTTPS_PROXY", …])',
);

export const StdioServerSchema = v.object({
  ...commonServerKeys,
  command: v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty")),
  args: v.optional(v.array(v.string("must be a string"), "must be an array of strings")),
  env: v.optional(stringMap),
  inheritEnv: v.optional(InheritEnvSchema),
  cwd: v.optional(v.string("must be a string")),
  type: v.optional(v.literal("stdio", 'must be "stdio" for a server with a command')),
  transport: v.optional(v.literal("stdio", 'must be "stdio" for a server with a command')),
});

const httpTransport = v.picklist(
  ["http", "streamable-http", "streamableHttp", "sse"],
  'must be "streamable-http" (or "http") or "sse"',
);

export const HttpServerSchema = v.object({
  ...commonServerKeys,
  url: v.pipe(v.string("must be a string"), v.url("must be an absolute http(s) URL")),
  headers: v.optional(stringMap),
  type: v.optional(httpTransport),
  transport: v.optional(httpTransport),
  /**
   * OAuth (the MCP authorization spec): on by default for a server without an Authorization header;
   * `false` turns it off; an object gives a client registered by hand, or the URL of a client
   * metadata document to use as the client id (SEP-991; a person's setting, never an agent's), and
   * the scopes to ask for.
   */
  oauth: v.optional(
    v.union(
      [
        v.literal(false),
        v.pipe(
          v.strictObject({
            clientId: v.optional(v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty"))),
            clientSecret: v.optional(v.string("must be a string")),
            clientMetadataUrl: v.optional(
              v.pipe(
                v.string("must be a string"),
                v.check(
                  isClientMetadataUrl,
                  "must be an https:// URL with a path (the client metadata document)",
                ),
              ),
            ),
            scopes: v.optional(v.array(v.string("must be a string"), "must be an array of strings")),
          }),
          v.check(
            (oauth) => !(oauth.clientId && oauth.clientMetadataUrl),
            "give clientId (a client registered by hand) or clientMetadataUrl, not both",
          ),
        ),
      ],
      'must be false or {"clientId", "clientSecret", "clientMetadataUrl", "scopes"}',
    ),
  ),
});

/** A client metadata document URL as a client id must be (SEP-991): https, with a path. */
function isClientMetadataUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.pathname !== "/";
  } catch {
    return false;
  }
}
