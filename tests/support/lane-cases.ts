/**
 * The calls the plain lane is held to the SDK's way with, over stdio (tests/e2e-plain-lane.test.ts)
 * and over streamable HTTP (tests/e2e-http-lane.test.ts), on the fixture server as `fixture`.
 */

/** A `call_tool` of `name` (a public name, SERVER__TOOL). */
export const callTool = (name: string, args?: Record<string, unknown>) => ({
  name: "call_tool",
  arguments: { name, ...(args ? { arguments: args } : {}) },
});

/** The fixture's flags for the tools below. */
export const LANE_FIXTURE_ARGS = ["--relay-tools", "--error-tools", "--storm-tools"];

/** Calls the lane serves: results, isError results with alternatives, a server's JSON-RPC error, a result too deep, a relayed sampling request. */
export const LANE_CALLS = [
  callTool("fixture__echo", { message: "hello" }),
  callTool("fixture__always_fails"),
  callTool("fixture__fail_with", { text: "the server says no" }),
  callTool("fixture__deep_result", { depth: 200 }),
  callTool("fixture__ask_model", { prompt: "say something" }),
  callTool("fixture__mixed_content"),
];

/** Calls it leaves to the SDK's way: an unknown tool, arguments that fail their check, the proxy's own tool. */
export const STEP_ASIDE_CALLS = [
  callTool("fixture__no_such_tool"),
  callTool("fixture__add_numbers", { a: "one", b: 2 }),
  { name: "retrieve_tools", arguments: { query: "echo a message" } },
];

/** The first call, which waits for the first indexing pass (the SDK's way): then the fixture is connected. */
export const WARM_UP = { ...callTool("fixture__echo", { message: "x" }), _meta: {} };
