import { ErrorCode, McpError, RequestSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * Malformed params get -32602 (Invalid params), as JSON-RPC says. The SDK validates a request
 * against the handler's schema before the handler runs and answers a mismatch with -32603
 * (Internal error), which tells a client the fault is ours. So handlers are registered with a
 * schema that takes any params (`loose`), and check them themselves (`strictly`).
 */
interface RequestSchemaLike {
  extend(shape: { params: typeof RequestSchema.shape.params }): unknown;
}

interface SafeParser<R> {
  safeParse(
    input: unknown,
  ): { success: true; data: R } | { success: false; error: { issues: readonly Issue[] } };
}

interface Issue {
  path: readonly PropertyKey[];
  message: string;
}

/** The request schema with its method kept and its params left open. */
export function loose<S extends RequestSchemaLike>(schema: S): S {
  return schema.extend({ params: RequestSchema.shape.params }) as S;
}

/** The request as `schema` reads it, or McpError -32602 naming what is wrong. */
export function strictly<R>(schema: SafeParser<R>, request: unknown): R {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.filter((part) => part !== "params").join(".") || "params"}: ${issue.message}`,
  );
  throw new McpError(ErrorCode.InvalidParams, `Invalid params: ${problems.join("; ")}`);
}
