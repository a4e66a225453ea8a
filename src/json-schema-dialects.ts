import type { Ajv, Options } from "ajv";

/**
 * One Ajv per JSON Schema dialect, chosen by the `$schema` a schema declares: 2020-12 when it
 * declares none (the MCP default for tool schemas), 2019-09, and draft-07 for draft-07, -06 and
 * -04 (ajv has no draft-04 class; a draft-04 schema whose keywords draft-07 reads otherwise, such
 * as a boolean `exclusiveMinimum`, does not compile and is left unchecked by the caller).
 *
 * Never a network fetch: ajv loads nothing by itself (no `loadSchema`, no `compileAsync`), a `$ref`
 * it cannot resolve inside the schema makes the compile fail, and `$schema` selects a class only.
 * `addUsedSchema: false`: a schema's `$id` is not registered in the shared instance, so one
 * server's tool can neither shadow nor be the target of a `$ref` from another server's tool.
 */
export type SchemaDialect = "2020-12" | "2019-09" | "draft-07";

const OPTIONS: Options = {
  strict: false,
  validateFormats: true,
  validateSchema: false,
  allErrors: true,
  addUsedSchema: false,
};

interface Engines {
  Ajv: typeof import("ajv").Ajv;
  Ajv2019: typeof import("ajv/dist/2019.js").Ajv2019;
  Ajv2020: typeof import("ajv/dist/2020.js").Ajv2020;
  addFormats: (ajv: Ajv) => void;
}
let engines: Engines | undefined;

/**
 * ajv and ajv-formats, loaded the first time a schema is compiled: evaluating them costs a serve
 * about 9 MiB and milliseconds, and most proxies start more often than they are called. `require`,
 * not `import()`: the callers (an SDK validator among them) are synchronous.
 */
function loadEngines(): Engines {
  if (!engines) {
    // ajv-formats is a CommonJS module whose export is the function (and its `default`).
    const formats = require("ajv-formats") as { default?: unknown };
    engines = {
      Ajv: (require("ajv") as typeof import("ajv")).Ajv,
      Ajv2019: (require("ajv/dist/2019.js") as typeof import("ajv/dist/2019.js")).Ajv2019,
      Ajv2020: (require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js")).Ajv2020,
      addFormats: (formats.default ?? formats) as Engines["addFormats"],
    };
  }
  return engines;
}

export function dialectOf(schema: unknown): SchemaDialect {
  const declared =
    schema !== null && typeof schema === "object" ? (schema as { $schema?: unknown }).$schema : undefined;
  if (typeof declared !== "string") return "2020-12";
  if (/json-schema\.org\/draft\/2019-09\//.test(declared)) return "2019-09";
  if (/json-schema\.org\/draft-0[4-7]\/schema/.test(declared)) return "draft-07";
  return "2020-12";
}

/**
 * How many schemas one Ajv compiles before a fresh one takes its place. Ajv keeps every schema it
 * compiled in its code scope, `removeSchema` or not, so one instance for the life of the proxy grew
 * with every tool ever called or listed (measured: +110 MiB over 20,000 tools called once).
 * Validators already compiled keep working; an instance goes once none of them is kept.
 */
export const COMPILES_PER_INSTANCE = 1_000;

const instances = new Map<SchemaDialect, { ajv: Ajv; compiles: number }>();

/**
 * The Ajv to compile `schema` with, for its dialect. Each call counts as one compile: call it once
 * per schema to compile, and keep the instance if it is needed again for that schema.
 */
export function ajvFor(schema: unknown): Ajv {
  const dialect = dialectOf(schema);
  let current = instances.get(dialect);
  if (!current || current.compiles >= COMPILES_PER_INSTANCE) {
    const { Ajv, Ajv2019, Ajv2020, addFormats } = loadEngines();
    const ajv =
      dialect === "2020-12"
        ? new Ajv2020(OPTIONS)
        : dialect === "2019-09"
          ? new Ajv2019(OPTIONS)
          : new Ajv(OPTIONS);
    addFormats(ajv);
    current = { ajv, compiles: 0 };
    instances.set(dialect, current);
  }
  current.compiles++;
  return current.ajv;
}
