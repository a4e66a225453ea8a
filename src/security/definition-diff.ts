/**
 * What changed between the definition a tool (or a prompt or resource template) was approved with
 * and the one it has now, as lines a person can review before approving it again: descriptions
 * line by line, schemas, arguments and annotations by the path of each value that changed. For a
 * new one, what it says it does and takes.
 */
interface Definition {
  name?: string;
  title?: unknown;
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  [key: string]: unknown;
}

const SHOWN = 160;

export function definitionDiff(before: Definition | undefined, after: Definition | undefined): string[] {
  if (!after) return [];
  if (!before) {
    // A tool's arguments are its schema's properties, a prompt's its `arguments`.
    const params = Array.isArray(after.arguments)
      ? after.arguments.map((argument) => String((argument as { name?: unknown }).name))
      : Object.keys(((after.inputSchema as { properties?: object } | undefined)?.properties ?? {}) as object);
    return [
      `description: ${clip(after.description ?? "")}`,
      ...(typeof after.uriTemplate === "string" ? [`uriTemplate: ${clip(after.uriTemplate)}`] : []),
      `arguments: ${params.length > 0 ? params.join(", ") : "none"}`,
    ];
  }
  const lines: string[] = [];
  const beforeText = (before.description ?? "").split("\n");
  const afterText = (after.description ?? "").split("\n");
  const removed = beforeText.filter((line) => !afterText.includes(line));
  const added = afterText.filter((line) => !beforeText.includes(line));
  if (removed.length > 0 || added.length > 0) {
    lines.push("description:");
    for (const line of removed) lines.push(`  - ${clip(line)}`);
    for (const line of added) lines.push(`  + ${clip(line)}`);
  }
  for (const field of [
    "title",
    "inputSchema",
    "outputSchema",
    "annotations",
    "arguments",
    "uriTemplate",
    "mimeType",
  ] as const) {
    const changes = valueDiff(before[field], after[field]);
    if (changes.length === 0) continue;
    lines.push(`${field}:`);
    for (const line of changes) lines.push(`  ${line}`);
  }
  return lines;
}

/**
 * The leaves of two JSON values that differ, by dotted path: `- path: old` and `+ path: new`
 * (a launch spec in `approve`, a schema above).
 */
export function valueDiff(before: unknown, after: unknown): string[] {
  const old = flatten(before);
  const now = flatten(after);
  const paths = [...new Set([...old.keys(), ...now.keys()])]
    .filter((path) => old.get(path) !== now.get(path))
    .sort();
  const lines: string[] = [];
  for (const path of paths) {
    if (old.has(path)) lines.push(`- ${path || "(value)"}: ${clip(old.get(path)!)}`);
    if (now.has(path)) lines.push(`+ ${path || "(value)"}: ${clip(now.get(path)!)}`);
  }
  return lines;
}

/** Every leaf of a JSON value by its dotted path, as JSON text. */
function flatten(value: unknown, path = "", out = new Map<string, string>()): Map<string, string> {
  if (value === undefined) return out;
  if (value !== null && typeof value === "object" && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value)) flatten(child, path ? `${path}.${key}` : key, out);
  } else {
    out.set(path, JSON.stringify(value));
  }
  return out;
}

function clip(text: string): string {
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}… (${text.length} characters)` : text;
}
