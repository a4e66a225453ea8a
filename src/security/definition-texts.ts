/**
 * Every text of an MCP tool, prompt or resource that a model reads, each with where it sits. Clients
 * hand the model the whole definition, schemas included, so a schema is walked everywhere
 * (properties, items, anyOf, $defs, additionalProperties, extension keywords…): every string value
 * (title, description, enum, default, examples, const…) and every name that is not a JSON Schema
 * keyword (property names, $defs names, x-… keys). Names are read twice, as written and as words
 * (`ignore_previous_rules`, `ignorePreviousRules` → "ignore previous rules"), since a model reads
 * them as words too. The walk is bounded so a hostile definition cannot make indexing slow; what
 * lies beyond the bound is reported, not silently passed.
 */
export interface PlacedText {
  /** Where the text sits: "description", "inputSchema.properties.city.enum[1]", … */
  where: string;
  text: string;
}

export interface DefinitionTexts {
  texts: PlacedText[];
  /** False when the definition was larger than the bounds and the rest was not read. */
  isComplete: boolean;
}

export const SCAN_BOUNDS = { depth: 32, nodes: 10_000, characters: 100_000 } as const;

export interface ToolDefinition {
  name: string;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

export interface PromptDefinition {
  name: string;
  title?: unknown;
  description?: unknown;
  /** [{ name, title?, description?, required? }] */
  arguments?: unknown;
}

/** A resource (`uri`) or a resource template (`uriTemplate`). */
export interface ResourceDefinition {
  name?: unknown;
  title?: unknown;
  description?: unknown;
  uri?: unknown;
  uriTemplate?: unknown;
  mimeType?: unknown;
  annotations?: unknown;
}

export function toolTexts(tool: ToolDefinition): DefinitionTexts {
  const texts = createCollector();
  texts.addName("name", tool.name);
  texts.add("title", tool.title);
  texts.add("description", tool.description);
  texts.walk(tool.annotations, "annotations");
  texts.walk(tool.inputSchema, "inputSchema");
  texts.walk(tool.outputSchema, "outputSchema");
  return texts.done();
}

export function promptTexts(prompt: PromptDefinition): DefinitionTexts {
  const texts = createCollector();
  texts.addName("name", prompt.name);
  texts.add("title", prompt.title);
  texts.add("description", prompt.description);
  texts.walk(prompt.arguments, "arguments");
  return texts.done();
}

export function resourceTexts(resource: ResourceDefinition): DefinitionTexts {
  const texts = createCollector();
  texts.addName("name", resource.name);
  for (const field of ["title", "description", "uri", "uriTemplate", "mimeType"] as const) {
    texts.add(field, resource[field]);
  }
  texts.walk(resource.annotations, "annotations");
  return texts.done();
}

/** Names that are structure, not prose: JSON Schema keywords and the fields of MCP objects. */
const STRUCTURAL_NAMES = new Set([
  "$schema",
  "$id",
  "$ref",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$defs",
  "$comment",
  "$vocabulary",
  "definitions",
  "type",
  "title",
  "description",
  "default",
  "examples",
  "enum",
  "const",
  "format",
  "pattern",
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "required",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "contains",
  "minContains",
  "maxContains",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "contentEncoding",
  "contentMediaType",
  "contentSchema",
  "deprecated",
  "readOnly",
  "writeOnly",
  "nullable",
  "name",
  "audience",
  "priority",
  "lastModified",
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
]);

function createCollector() {
  const texts: PlacedText[] = [];
  let characters = 0;
  let nodes = 0;
  let isComplete = true;

  function add(where: string, value: unknown): void {
    if (typeof value !== "string" || value === "" || !isComplete) return;
    const room = SCAN_BOUNDS.characters - characters;
    if (value.length > room) isComplete = false;
    const text = value.length > room ? value.slice(0, room) : value;
    characters += text.length;
    if (text !== "") texts.push({ where, text });
  }

  function addName(where: string, value: unknown): void {
    add(where, value);
    if (typeof value !== "string") return;
    const words = nameAsWords(value);
    if (words !== value) add(`${where}, read as words`, words);
  }

  function walk(value: unknown, where: string, depth = 0, key?: string): void {
    if (typeof value === "string") {
      // The name of a prompt argument (or of anything else that has one) is a name too.
      if (key === "name") addName(where, value);
      else add(where, value);
      return;
    }
    if (value === null || typeof value !== "object" || !isComplete) return;
    if (depth >= SCAN_BOUNDS.depth || ++nodes > SCAN_BOUNDS.nodes) {
      isComplete = false;
      return;
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length && isComplete; i++) walk(value[i], `${where}[${i}]`, depth + 1);
      return;
    }
    // for…in rather than Object.entries: a hostile object with a million keys is left early.
    for (const key in value) {
      if (!isComplete) return;
      const path = `${where}.${key.length > 40 ? `${key.slice(0, 40)}…` : key}`;
      if (!STRUCTURAL_NAMES.has(key)) addName(`${path} (a name)`, key);
      walk((value as Record<string, unknown>)[key], path, depth + 1, key);
    }
  }

  return { add, addName, walk, done: (): DefinitionTexts => ({ texts, isComplete }) };
}

const NAME_JOINTS = /[_-]|[a-z0-9][A-Z]/;

/** A name as the words it is made of: `snake_case`, `kebab-case` and `camelCase` split at spaces. */
export function nameAsWords(name: string): string {
  if (!NAME_JOINTS.test(name)) return name;
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim();
}
