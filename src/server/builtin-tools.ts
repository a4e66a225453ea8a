import type { Tool } from "@modelcontextprotocol/server";
import * as v from "valibot";
import { USAGE_FIGURES_SCHEMA } from "./usage-figures.ts";

/** The tools the proxy itself offers. Upstream tools can never take these names. */
export const RETRIEVE_TOOLS = "retrieve_tools";
export const CALL_TOOL = "call_tool";
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set([RETRIEVE_TOOLS, CALL_TOOL]);
/** Names no upstream tool may take: the built-ins and the management tool (upstream-servers-tool.ts). */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  ...BUILTIN_TOOL_NAMES,
  "upstream_servers",
  "tools_stat",
  "get_tool_alternatives",
]);

/**
 * A search request is a sentence or two. A query of megabytes took the search engine seconds and held
 * up every other request meanwhile, so only its first MAX_QUERY_CHARS characters are searched (real
 * task prompts with pasted text are longer, and the request at their start is what matters); the
 * answer says so.
 */
export const MAX_QUERY_CHARS = 4096;

/** The query as searched, cut at MAX_QUERY_CHARS (never inside a surrogate pair), and a note when cut. */
export function boundQuery(query: string): { query: string; note?: string } {
  if (query.length <= MAX_QUERY_CHARS) return { query };
  const end = /[\uD800-\uDBFF]/.test(query[MAX_QUERY_CHARS - 1]!) ? MAX_QUERY_CHARS - 1 : MAX_QUERY_CHARS;
  return {
    query: query.slice(0, end).trim(),
    note:
      `The query is ${query.length} characters long; only its first ${MAX_QUERY_CHARS} were searched. ` +
      "Put what you want to do first, in a sentence or two.",
  };
}

/**
 * `top_k` may ask for fewer tools than MCPPROXY_TOP_K, never more: more is clamped to it and the
 * answer says so (an error made agents that asked for 10 get nothing).
 */
export function retrieveToolsArgs(maxTopK: number) {
  const bound = "top_k must be a whole number of at least 1";
  return v.pipe(
    v.object({
      query: v.pipe(v.string("query must be a string"), v.trim(), v.nonEmpty("query must not be empty")),
      top_k: v.optional(v.pipe(v.number(bound), v.integer(bound), v.minValue(1, bound))),
      include_metrics: v.optional(v.boolean("include_metrics must be true or false")),
    }),
    v.transform(({ query, top_k, include_metrics }) => ({
      query,
      topK: Math.min(top_k ?? maxTopK, maxTopK),
      includeMetrics: include_metrics === true,
      notes:
        top_k !== undefined && top_k > maxTopK
          ? [
              `top_k ${top_k} is over this proxy's limit of ${maxTopK} (MCPPROXY_TOP_K): up to ${maxTopK} returned.`,
            ]
          : [],
    })),
  );
}

const ARGUMENTS_MESSAGE = "arguments must be an object (or a JSON string of one)";
// valibot's record takes arrays too; tool arguments are a JSON object.
const toolArguments = v.pipe(
  v.custom<Record<string, unknown>>(
    (input) => input !== null && typeof input === "object" && !Array.isArray(input),
    ARGUMENTS_MESSAGE,
  ),
  v.record(v.string(), v.unknown(), ARGUMENTS_MESSAGE),
);

export const CallToolArgs = v.object({
  name: v.pipe(v.string("name must be a string"), v.nonEmpty("name must not be empty")),
  // Some clients and models send the arguments object as a JSON string of it; it means the same.
  arguments: v.optional(
    v.union(
      [toolArguments, v.pipe(v.string(), v.parseJson(undefined, ARGUMENTS_MESSAGE), toolArguments)],
      ARGUMENTS_MESSAGE,
    ),
  ),
});

export function builtinToolDefinitions(maxTopK: number): Tool[] {
  return [
    {
      name: RETRIEVE_TOOLS,
      title: "Find tools",
      description:
        "Search every tool of every connected MCP server by what you want to do, in plain words " +
        "(for example 'create a GitHub issue' or 'read a file'). Returns the best matches first, each with " +
        "its name and input schema. Then run one with call_tool, passing that name and arguments that fit the schema.",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: "What you want to do, in a few words or a sentence." },
          top_k: {
            type: "integer",
            minimum: 1,
            // No `maximum`: clients that check arguments against it refused larger values before
            // the proxy could clamp them.
            description: `How many tools to return: at most ${maxTopK} (the default); more is clamped to ${maxTopK}.`,
          },
          include_metrics: {
            type: "boolean",
            description:
              "Add each tool's usage figures (calls, success rate, p50 latency), to prefer tools that work.",
          },
        },
        required: ["query"],
      },
      outputSchema: {
        type: "object",
        properties: {
          query: { type: "string" },
          tools: {
            type: "array",
            items: {
              type: "object",
              properties: {
                name: { type: "string" },
                server: { type: "string" },
                tool: { type: "string" },
                description: { type: "string" },
                inputSchema: { type: "object" },
                title: { type: "string" },
                annotations: {
                  type: "object",
                  description:
                    "The upstream's hints: readOnlyHint, destructiveHint, idempotentHint, openWorldHint",
                },
                outputSchema: { type: "object" },
                score: {
                  type: "number",
                  description: "0-1: how much of the request the tool matches; higher is better",
                },
                metrics: USAGE_FIGURES_SCHEMA,
              },
              required: ["name", "server", "tool", "description", "inputSchema", "score"],
            },
          },
          hint: { type: "string" },
          notes: {
            type: "array",
            items: { type: "string" },
            description: "What was changed in the request to answer it: top_k clamped, a long query cut",
          },
          awaitingApproval: {
            type: "object",
            description:
              "Matching tools left out because they wait for a person's approval: how many, their servers, and " +
              "the command the user (not you) runs to review and approve them",
            properties: {
              tools: { type: "integer" },
              servers: { type: "array", items: { type: "string" } },
              command: { type: "string" },
            },
          },
          registered: {
            type: "array",
            items: { type: "string" },
            description:
              "Dynamic routing: these tools are now also listed as tools of their own; call them by name",
          },
          connecting: {
            type: "object",
            properties: { servers: { type: "array", items: { type: "string" } }, hint: { type: "string" } },
            description: "Servers still starting, whose new tools this answer cannot include yet",
          },
        },
        required: ["query", "tools"],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: CALL_TOOL,
      title: "Call a tool",
      description:
        "Run a tool found with retrieve_tools. `name` is the tool's name exactly as retrieve_tools returned it " +
        "(server__tool); `arguments` must match that tool's input schema. Returns the tool's own result.",
      inputSchema: {
        type: "object",
        properties: {
          name: {
            type: "string",
            description: "The tool name from retrieve_tools, e.g. github__create_issue.",
          },
          arguments: { type: "object", description: "The tool's arguments, per its input schema." },
        },
        required: ["name"],
      },
      annotations: { openWorldHint: true },
    },
  ];
}

/** Turns valibot issues into one sentence for an `isError` result. */
export function describeIssues(tool: string, issues: readonly v.BaseIssue<unknown>[]): string {
  const messages = issues.map((issue) => {
    const path = v.getDotPath(issue);
    return issue.input === undefined && path ? `${path} is required` : issue.message;
  });
  return `Invalid arguments for ${tool}: ${messages.join("; ")}.`;
}
