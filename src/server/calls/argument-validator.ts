import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { CatalogTool } from "../../index/catalog-types.ts";
import type { ToolCatalog } from "../../index/tool-catalog.ts";
import { ajvFor } from "../../json-schema-dialects.ts";
import type { Logger } from "../../log.ts";

/**
 * Checks a call's arguments against the tool's input schema, in the JSON Schema dialect it declares
 * (json-schema-dialects.ts), before it is forwarded, so a bad call gets an error that names the
 * field at once instead of whatever the server makes of it.
 * Validators are compiled on first use and kept for the most recently called tools (the schema is
 * read from the catalog only on a miss). A schema that does not compile is not enforced (logged
 * once), and a server can be left unchecked altogether (`validateArguments: false`, for servers
 * whose schemas do not describe what they accept).
 * An optional argument given as `null` where its schema has no null is read as not given, and left
 * out of the call, when that makes the call fit: models asked for strict function calls send null
 * for every optional field they leave unset, and MCP reads null as absent (SEP-2243: no
 * Mcp-Param header for a null). Only a call that does not fit as given is changed.
 */
export interface ArgumentValidator {
  /** The arguments to forward, or why they do not fit the tool's schema. */
  check(tool: CatalogTool, args: Readonly<Record<string, unknown>>): ArgumentCheck;
}

type ArgumentCheck = { args: Readonly<Record<string, unknown>>; problems?: undefined } | { problems: string };

const VALIDATORS_KEPT = 256;

export function createArgumentValidator(
  catalog: ToolCatalog,
  options: { unchecked: ReadonlySet<string>; logger: Logger },
): ArgumentValidator {
  /** By tool hash, least recently used first; `null` for a schema that did not compile. */
  const compiled = new Map<string, { validate: ValidateFunction | null; schema: object; ajv: Ajv }>();

  const validatorOf = (tool: CatalogTool) => {
    const known = compiled.get(tool.hash);
    if (known) {
      compiled.delete(tool.hash);
      compiled.set(tool.hash, known);
      return known.validate;
    }
    const schema = catalog.definitionOf(tool)?.inputSchema ?? {};
    let validate: ValidateFunction | null = null;
    // The dialect the schema declares (2020-12 when none), made on first use: most proxies
    // start more often than they are called.
    const ajv = ajvFor(schema);
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      options.logger.debug(
        `the input schema of ${tool.name} does not compile, so its arguments are not checked`,
        {
          error: (error as Error).message,
        },
      );
    }
    compiled.set(tool.hash, { validate, schema, ajv });
    if (compiled.size > VALIDATORS_KEPT) {
      const [oldest, entry] = compiled.entries().next().value as [string, { schema: object; ajv: Ajv }];
      compiled.delete(oldest);
      entry.ajv.removeSchema(entry.schema);
    }
    return validate;
  };

  return {
    check(tool, args) {
      if (options.unchecked.has(tool.server)) return { args };
      const validate = validatorOf(tool);
      if (!validate || validate(args)) return { args };
      const problems = (validate.errors ?? []).map(describeProblem).join("; ");
      const withoutNulls = withoutOptionalNulls(args, validate.schema);
      if (withoutNulls && validate(withoutNulls)) return { args: withoutNulls };
      return { problems };
    },
  };
}

/** The arguments without their top-level nulls that the schema does not require, if any were given. */
function withoutOptionalNulls(
  args: Readonly<Record<string, unknown>>,
  schema: unknown,
): Record<string, unknown> | undefined {
  const required = new Set<unknown>(
    schema && typeof schema === "object" && Array.isArray((schema as { required?: unknown }).required)
      ? (schema as { required: unknown[] }).required
      : [],
  );
  const kept = Object.entries(args).filter(([key, value]) => value !== null || required.has(key));
  return kept.length < Object.keys(args).length ? Object.fromEntries(kept) : undefined;
}

function describeProblem(error: ErrorObject): string {
  const field = error.instancePath.replace(/^\//, "").replace(/\//g, ".");
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return `${field ? `${field}.` : ""}${missing} is required`;
  }
  if (error.keyword === "additionalProperties") {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return `${field ? `${field}.` : ""}${extra} is not a known argument`;
  }
  return `${field || "the arguments"} ${error.message ?? "is invalid"}`;
}
