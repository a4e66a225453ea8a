import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { CatalogTool, ToolCatalog } from "../index/tool-catalog.ts";
import { ajvFor } from "../json-schema-dialects.ts";
import type { Logger } from "../log.ts";

/**
 * Checks a call's arguments against the tool's input schema, in the JSON Schema dialect it declares
 * (json-schema-dialects.ts), before it is forwarded, so a bad call gets an error that names the
 * field at once instead of whatever the server makes of it.
 * Validators are compiled on first use and kept for the most recently called tools (the schema is
 * read from the catalog only on a miss). A schema that does not compile is not enforced (logged
 * once), and a server can be left unchecked altogether (`validateArguments: false`, for servers
 * whose schemas do not describe what they accept).
 */
export interface ArgumentValidator {
  /** Why the arguments do not fit the tool's schema, or undefined when they do. */
  problems(tool: CatalogTool, args: Readonly<Record<string, unknown>>): string | undefined;
}

export const VALIDATORS_KEPT = 256;

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
    problems(tool, args) {
      if (options.unchecked.has(tool.server)) return undefined;
      const validate = validatorOf(tool);
      if (!validate || validate(args)) return undefined;
      return (validate.errors ?? []).map(describeProblem).join("; ");
    },
  };
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
