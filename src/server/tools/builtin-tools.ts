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
  "read_result",
]);

/**
 * A search request is a sentence or two. A query of megabytes took the search engine seconds and held
 * up every other request meanwhile, so only its first MAX_QUERY_CHARS characters are searched (real
 * task prompts with pasted text are longer, and the request at their start is what matters); the
 * answer says so.
 */
const MAX_QUERY_CHARS = 4096;

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
 * The most requests one retrieve_tools call may carry in `queries`. An agent that plans a task
 * asks for its steps together; ten covers the multi-step tasks of the retrieval eval (at most nine
 * steps) and bounds what one call costs and adds to the context: ten searches of up to
 * MAX_QUERY_CHARS each, and ten lists of up to MCPPROXY_TOP_K schemas in one answer.
 */
const MAX_QUERIES = 10;

/**
 * `query` (one request) or `queries` (up to MAX_QUERIES, one ranked list each), never both.
 * `top_k` may ask for fewer tools than MCPPROXY_TOP_K, never more: more is clamped to it and the
 * answer says so (an error made agents that asked for 10 get nothing). `adaptive` turns the cut
 * after the best hits (adaptive-top-k.ts) on or off for this call; unset, the setting decides.
 */
export function retrieveToolsArgs(maxTopK: number) {
  const bound = "top_k must be a whole number of at least 1";
  return v.pipe(
    v.object({
      query: v.optional(
        v.pipe(v.string("query must be a string"), v.trim(), v.nonEmpty("query must not be empty")),
      ),
      queries: v.optional(
        v.pipe(
          v.array(v.unknown(), "queries must be a list of strings"),
          v.minLength(1, "queries must not be empty: give at least one request"),
          v.maxLength(
            MAX_QUERIES,
            `queries may hold at most ${MAX_QUERIES} requests: ask for the rest in another call`,
          ),
          // Each bad entry named by its place, so the agent knows which one to fix.
          v.rawCheck(({ dataset, addIssue }) => {
            if (!dataset.typed) return;
            dataset.value.forEach((item, i) => {
              if (typeof item !== "string") addIssue({ message: `queries[${i}] must be a string` });
              else if (!item.trim()) addIssue({ message: `queries[${i}] must not be empty` });
            });
          }),
          v.transform((items) => items.map((item) => String(item).trim())),
        ),
      ),
      top_k: v.optional(v.pipe(v.number(bound), v.integer(bound), v.minValue(1, bound))),
      adaptive: v.optional(v.boolean("adaptive must be true or false")),
      include_metrics: v.optional(v.boolean("include_metrics must be true or false")),
    }),
    v.check(
      ({ query, queries }) => query === undefined || queries === undefined,
      "give query (one request) or queries (several), not both",
    ),
    v.check(
      ({ query, queries }) => query !== undefined || queries !== undefined,
      "query is required (or queries, a list of requests)",
    ),
    v.transform(({ query, queries, top_k, adaptive, include_metrics }) => ({
      queries: queries ?? [query!],
      isBatch: queries !== undefined,
      topK: Math.min(top_k ?? maxTopK, maxTopK),
      isAdaptive: adaptive,
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

type CallToolInput = v.InferOutput<typeof CallToolArgs>;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;

/**
 * call_tool's arguments as `CallToolArgs` parses them, for the common call (a JSON object of a
 * non-empty name and, if any, an arguments object none of whose keys valibot's record leaves out),
 * told without running the schema: the name and the same arguments object, which the record would
 * copy key by key. Anything else is undefined, and the schema's to parse (builtin-tools.test.ts
 * holds the two to each other).
 */
export function plainCallToolArgs(args: unknown): CallToolInput | undefined {
  if (!isPlainObject(args)) return undefined;
  const { name } = args;
  if (typeof name !== "string" || name === "") return undefined;
  if (!Object.hasOwn(args, "arguments")) return { name };
  const toolArgs = args.arguments;
  if (
    !isPlainObject(toolArgs) ||
    Object.hasOwn(toolArgs, "__proto__") ||
    Object.hasOwn(toolArgs, "prototype") ||
    Object.hasOwn(toolArgs, "constructor")
  )
    return undefined;
  return { name, arguments: toolArgs };
}

/** One ranked list of retrieve_tools: the answer to one request, alone or as an entry of `results`. */
const RANKED_LIST = {
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
          description: "The upstream's hints: readOnlyHint, destructiveHint, idempotentHint, openWorldHint",
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
    description:
      "What was changed in the request to answer it: top_k clamped, a long query cut, weaker matches left out",
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
} as const;

/** `servers`: what the proxy can search, said after the fixed text (search-description.ts); "" for none. */
export function builtinToolDefinitions(maxTopK: number, servers = ""): Tool[] {
  return [
    {
      name: RETRIEVE_TOOLS,
      title: "Find tools",
      description:
        "Search every tool of every connected MCP server by what you want to do, in plain words " +
        "(for example 'create a GitHub issue' or 'read a file'). Returns the best matches first, each with " +
        "its name and input schema. Then run one with call_tool, passing that name and arguments that fit the schema. " +
        `Planning several steps? Pass them as \`queries\` (up to ${MAX_QUERIES}) instead of \`query\`: one call ` +
        "answers with one list per request, in `results`." +
        (servers ? `\n\n${servers}` : ""),
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: "What you want to do, in a few words or a sentence." },
          queries: {
            type: "array",
            items: { type: "string" },
            minItems: 1,
            maxItems: MAX_QUERIES,
            description:
              "Instead of query: several requests (the steps of a plan, say), each answered with its own list.",
          },
          top_k: {
            type: "integer",
            minimum: 1,
            // No `maximum`: clients that check arguments against it refused larger values before
            // the proxy could clamp them.
            description: `How many tools to return (per request): at most ${maxTopK} (the default); more is clamped to ${maxTopK}.`,
          },
          adaptive: {
            type: "boolean",
            description:
              "true: return only the tools that score close to the best one (often one or two); false: up to " +
              "top_k. Unset: as the proxy is configured.",
          },
          include_metrics: {
            type: "boolean",
            description:
              "Add each tool's usage figures (calls, success rate, p50 latency), to prefer tools that work.",
          },
        },
      },
      outputSchema: {
        type: "object",
        properties: {
          ...RANKED_LIST,
          results: {
            type: "array",
            description: "With queries: one list per request, in the order asked",
            items: { type: "object", properties: RANKED_LIST, required: ["query", "tools"] },
          },
          registered: {
            type: "array",
            items: { type: "string" },
            description:
              "Dynamic routing: these tools are now also listed as tools of their own; call them by name",
          },
          connecting: {
            type: "object",
            properties: {
              servers: { type: "array", items: { type: "string" } },
              count: { type: "integer" },
              hint: { type: "string" },
            },
            description:
              "Servers still starting, whose new tools this answer cannot include yet: the first 20 named, and how many in all",
          },
        },
        // One request answers with its list at the top level (as before queries existed), several with `results`.
        anyOf: [{ required: ["query", "tools"] }, { required: ["results"] }],
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
