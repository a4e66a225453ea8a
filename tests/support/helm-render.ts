import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";

/**
 * Renders deploy/helm/mcpproxy the way `helm template` does, for the subset of Helm's template
 * language the chart uses (there is no helm binary here): values and built-in objects by path,
 * `$`, `include` of `define`d templates, `if`/`else`, `with`, pipelines, parentheses, and the
 * functions in FUNCTIONS. Anything else (`range`, variables, `tpl`, another function) is an error
 * naming the construct, so the chart cannot grow past what is tested without the test saying so.
 */
type Value = unknown;
type Node =
  | { kind: "text"; text: string }
  | { kind: "output"; pipeline: Pipeline }
  | { kind: "if" | "with"; pipeline: Pipeline; whenTrue: Node[]; whenFalse: Node[] };
type Term =
  | { kind: "path"; root: "dot" | "dollar"; path: string[] }
  | { kind: "literal"; value: Value }
  | { kind: "call"; name: string; args: Term[] }
  | { kind: "group"; pipeline: Pipeline };
type Pipeline = Term[];

interface Scope {
  dot: Value;
  root: Value;
  defines: Map<string, Node[]>;
}

export class TemplateError extends Error {}

function isEmpty(value: Value): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value as object).length === 0;
}

const indentLines = (spaces: number, text: string) =>
  text
    .split("\n")
    .map((line) => " ".repeat(spaces) + line)
    .join("\n");

/** The functions the chart may call; the last argument is the value piped in. */
const FUNCTIONS: Record<string, (scope: Scope, ...args: Value[]) => Value> = {
  include: (scope, name, dot) => {
    const body = scope.defines.get(String(name));
    if (!body) throw new TemplateError(`include of an unknown template "${String(name)}"`);
    return renderNodes(body, { ...scope, dot });
  },
  toYaml: (_, value) => YAML.stringify(value, { lineWidth: 0 }).replace(/\n$/, ""),
  toJson: (_, value) => JSON.stringify(value),
  toPrettyJson: (_, value) => JSON.stringify(value, null, 2),
  nindent: (_, spaces, text) => `\n${indentLines(Number(spaces), String(text))}`,
  quote: (_, value) => JSON.stringify(value === undefined || value === null ? "" : String(value)),
  default: (_, fallback, value) => (isEmpty(value) ? fallback : value),
  required: (_, message, value) => {
    if (value === undefined || value === null || value === "") throw new TemplateError(String(message));
    return value;
  },
  not: (_, value) => isEmpty(value),
  sha256sum: (_, text) => createHash("sha256").update(String(text)).digest("hex"),
};

/** Splits a template into text and actions, applying `{{-` and `-}}` whitespace trimming. */
function lex(source: string): { text: string; action?: string }[] {
  const parts: { text: string; action?: string }[] = [];
  let rest = source;
  let trimNext = false;
  while (rest.length > 0) {
    const open = rest.indexOf("{{");
    let text = open === -1 ? rest : rest.slice(0, open);
    if (trimNext) text = text.replace(/^\s+/, "");
    if (open === -1) {
      parts.push({ text });
      break;
    }
    const close = rest.indexOf("}}", open);
    if (close === -1) throw new TemplateError(`unclosed action: ${rest.slice(open, open + 40)}`);
    let action = rest.slice(open + 2, close);
    if (action.startsWith("- ")) {
      text = text.replace(/\s+$/, "");
      action = action.slice(2);
    }
    trimNext = action.endsWith(" -");
    if (trimNext) action = action.slice(0, -2);
    parts.push({ text, action: action.trim() });
    rest = rest.slice(close + 2);
  }
  return parts;
}

function tokenize(action: string): string[] {
  const tokens = action.match(/"(?:[^"\\]|\\.)*"|\(|\)|\||[^\s()|]+/g) ?? [];
  return tokens;
}

function parsePipeline(tokens: string[], where: string): Pipeline {
  let at = 0;
  const term = (): Term => {
    const token = tokens[at++];
    if (token === undefined) throw new TemplateError(`unexpected end of "${where}"`);
    if (token === "(") {
      const start = at;
      let depth = 1;
      while (depth > 0) {
        const next = tokens[at++];
        if (next === undefined) throw new TemplateError(`unbalanced ( in "${where}"`);
        if (next === "(") depth++;
        if (next === ")") depth--;
      }
      return { kind: "group", pipeline: parsePipeline(tokens.slice(start, at - 1), where) };
    }
    if (token.startsWith('"')) return { kind: "literal", value: JSON.parse(token) };
    if (/^-?\d+$/.test(token)) return { kind: "literal", value: Number(token) };
    if (token === "true" || token === "false") return { kind: "literal", value: token === "true" };
    if (token === ".") return { kind: "path", root: "dot", path: [] };
    if (token === "$") return { kind: "path", root: "dollar", path: [] };
    if (/^\.[A-Za-z_][\w.]*$/.test(token))
      return { kind: "path", root: "dot", path: token.slice(1).split(".") };
    if (/^\$\.[A-Za-z_][\w.]*$/.test(token))
      return { kind: "path", root: "dollar", path: token.slice(2).split(".") };
    if (token in FUNCTIONS) return { kind: "call", name: token, args: [] };
    throw new TemplateError(
      `"${token}" in "${where}" is outside the template subset tests/support/helm-render.ts knows`,
    );
  };
  const commands: Pipeline = [];
  while (at < tokens.length) {
    const head = term();
    if (head.kind === "call") {
      while (at < tokens.length && tokens[at] !== "|") head.args.push(term());
    }
    commands.push(head);
    if (at < tokens.length) {
      if (tokens[at] !== "|") throw new TemplateError(`expected | in "${where}", found ${tokens[at]}`);
      at++;
    }
  }
  if (commands.length === 0) throw new TemplateError(`empty action "${where}"`);
  return commands;
}

/** Parses actions into a tree, collecting `define`s into `defines`. */
function parse(source: string, defines: Map<string, Node[]>): Node[] {
  const stack: { nodes: Node[]; block?: Extract<Node, { kind: "if" | "with" }>; define?: string }[] = [
    { nodes: [] },
  ];
  const top = () => stack[stack.length - 1]!;
  for (const { text, action } of lex(source)) {
    if (text) top().nodes.push({ kind: "text", text });
    if (action === undefined) continue;
    const [word = "", ...rest] = tokenize(action);
    if (word === "if" || word === "with") {
      const block = {
        kind: word,
        pipeline: parsePipeline(rest, action),
        whenTrue: [],
        whenFalse: [],
      } as Extract<Node, { kind: "if" | "with" }>;
      top().nodes.push(block);
      stack.push({ nodes: block.whenTrue, block });
    } else if (word === "else" && rest.length === 0) {
      const frame = top();
      if (!frame.block || frame.nodes === frame.block.whenFalse)
        throw new TemplateError("else without if/with");
      frame.nodes = frame.block.whenFalse;
    } else if (word === "define" && rest.length === 1) {
      const body: Node[] = [];
      stack.push({ nodes: body, define: JSON.parse(rest[0]!) as string });
    } else if (word === "end" && rest.length === 0) {
      const frame = stack.pop();
      if (!frame || stack.length === 0) throw new TemplateError("end without a block");
      if (frame.define !== undefined) defines.set(frame.define, frame.nodes);
    } else if (/^[a-z]+$/.test(word) && !(word in FUNCTIONS)) {
      throw new TemplateError(
        `"${word}" in "${action}" is outside the template subset tests/support/helm-render.ts knows`,
      );
    } else {
      top().nodes.push({ kind: "output", pipeline: parsePipeline([word, ...rest], action) });
    }
  }
  if (stack.length !== 1) throw new TemplateError("a block is not closed with end");
  return stack[0]!.nodes;
}

function evaluate(pipeline: Pipeline, scope: Scope): Value {
  let piped: Value;
  pipeline.forEach((term, index) => {
    const args = term.kind === "call" ? term.args.map((arg) => evaluateTerm(arg, scope)) : [];
    if (index > 0) {
      if (term.kind !== "call") throw new TemplateError("only a function can follow |");
      args.push(piped);
    }
    piped = term.kind === "call" ? FUNCTIONS[term.name]!(scope, ...args) : evaluateTerm(term, scope);
  });
  return piped;
}

function evaluateTerm(term: Term, scope: Scope): Value {
  if (term.kind === "literal") return term.value;
  if (term.kind === "group") return evaluate(term.pipeline, scope);
  if (term.kind === "call")
    return FUNCTIONS[term.name]!(scope, ...term.args.map((arg) => evaluateTerm(arg, scope)));
  let value = term.root === "dot" ? scope.dot : scope.root;
  for (const key of term.path) {
    value = value !== null && typeof value === "object" ? (value as Record<string, Value>)[key] : undefined;
  }
  return value;
}

function renderNodes(nodes: Node[], scope: Scope): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") out += node.text;
    else if (node.kind === "output") {
      const value = evaluate(node.pipeline, scope);
      if (value !== null && typeof value === "object")
        throw new TemplateError("an object printed as text: pipe it through toYaml or toJson");
      out += value === undefined || value === null ? "" : String(value);
    } else {
      const value = evaluate(node.pipeline, scope);
      const chosen = isEmpty(value) ? node.whenFalse : node.whenTrue;
      out += renderNodes(chosen, node.kind === "with" && !isEmpty(value) ? { ...scope, dot: value } : scope);
    }
  }
  return out;
}

/** Helm's values merge: maps merge key by key, anything else from the override. */
function mergeValues(base: Value, override: Value): Value {
  if (!base || !override || typeof base !== "object" || typeof override !== "object") return override ?? base;
  if (Array.isArray(base) || Array.isArray(override)) return override;
  const merged: Record<string, Value> = { ...(base as Record<string, Value>) };
  for (const [key, value] of Object.entries(override)) merged[key] = mergeValues(merged[key], value);
  return merged;
}

export interface RenderedChart {
  /** Each template's output by file name (NOTES.txt included). */
  files: Map<string, string>;
  /** The YAML documents of every manifest, parsed, empty ones left out. */
  manifests: Record<string, unknown>[];
}

/** `helm template RELEASE CHART -f valuesOverride`, for this chart's subset. */
export function renderChart(
  chartDir: string,
  valuesOverride: Value = {},
  release = "mcpproxy",
): RenderedChart {
  const chart = YAML.parse(readFileSync(join(chartDir, "Chart.yaml"), "utf8")) as Record<string, Value>;
  const defaults = YAML.parse(readFileSync(join(chartDir, "values.yaml"), "utf8")) as Value;
  const root = {
    Values: mergeValues(defaults, valuesOverride),
    Release: { Name: release, Namespace: "default", Service: "Helm" },
    // Helm capitalizes Chart.yaml's keys: .Chart.Name, .Chart.AppVersion.
    Chart: Object.fromEntries(
      Object.entries(chart).map(([key, value]) => [key[0]!.toUpperCase() + key.slice(1), value]),
    ),
  };
  const defines = new Map<string, Node[]>();
  const templatesDir = join(chartDir, "templates");
  const parsed = readdirSync(templatesDir)
    .sort()
    .map((name) => ({ name, nodes: parse(readFileSync(join(templatesDir, name), "utf8"), defines) }));
  const files = new Map<string, string>();
  const manifests: Record<string, unknown>[] = [];
  for (const { name, nodes } of parsed) {
    if (name.startsWith("_")) continue;
    const text = renderNodes(nodes, { dot: root, root, defines });
    files.set(name, text);
    if (!name.endsWith(".yaml")) continue;
    for (const document of YAML.parseAllDocuments(text)) {
      if (document.errors.length > 0)
        throw new TemplateError(`${name}: ${document.errors[0]!.message}\n${text}`);
      const value = document.toJS() as Record<string, unknown> | null;
      if (value) manifests.push(value);
    }
  }
  return { files, manifests };
}
