import { RequestSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * Malformed params get -32602 (Invalid params), as JSON-RPC says. For tools/call the SDK's Server
 * checks the params against CallToolRequestSchema itself and answers -32602; but the protocol layer
 * under it first parses every request with the schema its handler was registered with, and answers
 * a mismatch with -32603 (Internal error), which tells a client the fault is ours. So the handler
 * is registered with this schema: the method kept, the params left to the Server's own check.
 */
interface RequestSchemaLike {
  extend(shape: { params: typeof RequestSchema.shape.params }): unknown;
}

export function loose<S extends RequestSchemaLike>(schema: S): S {
  return schema.extend({ params: RequestSchema.shape.params }) as S;
}
