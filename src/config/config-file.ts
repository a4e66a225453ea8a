import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { tempPathFor } from "../atomic-file.ts";
import { ProxyError } from "../errors.ts";

/**
 * The config file on disk. It may be JSONC, as VS Code, Cursor and Zed users write their files:
 * `//` and `/* *\/` comments and trailing commas are accepted; anything else that is not JSON is
 * reported with its line and column.
 */
export function readConfigFile(path: string): unknown {
  return parseConfigText(readFileSync(path, "utf8"), path);
}

/** The same for text read already (or about to be written): `path` names it in errors. */
export function parseConfigText(text: string, path: string): unknown {
  // Most files are plain JSON: the runtime's parser reads 20,000 servers in a fraction of the time.
  // It makes every key an own property, as plainValue does, and keeps the last of a repeated key.
  try {
    return JSON.parse(text);
  } catch {
    // Comments, trailing commas, or a mistake: read as JSONC, which says where.
  }
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    throw new ProxyError(
      "CONFIG_INVALID",
      `Config file ${path} is not valid JSON (comments and trailing commas are fine).`,
      {
        details: errors.slice(0, 5).map((error) => {
          const { line, column } = positionOf(text, error.offset);
          return `line ${line}, column ${column}: ${describeParseError(printParseErrorCode(error.error))}`;
        }),
      },
    );
  }
  return tree ? plainValue(tree) : undefined;
}

/**
 * A parsed node as a plain value whose every key is an own property. jsonc-parser's `parse`
 * assigns keys, so a server named `__proto__` set the map's prototype instead and vanished from
 * it in silence; defined this way, it is an entry like any other, which the loader then refuses.
 */
function plainValue(node: Node): unknown {
  switch (node.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (!key || !value) continue;
        Object.defineProperty(out, String(key.value), {
          value: plainValue(value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    case "array":
      return (node.children ?? []).map(plainValue);
    default:
      return node.value;
  }
}

/** The config created on a first run with none: no servers yet. Private to the user, written whole. */
export function createDefaultConfig(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = tempPathFor(path);
  writeFileSync(temp, `${JSON.stringify({ mcpServers: {} }, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

const PARSE_ERRORS: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "a number is malformed",
  PropertyNameExpected: "a key (in double quotes) was expected",
  ValueExpected: "a value was expected",
  ColonExpected: "a colon was expected",
  CommaExpected: "a comma was expected",
  CloseBraceExpected: "a closing } was expected",
  CloseBracketExpected: "a closing ] was expected",
  EndOfFileExpected: "the file should end here",
  UnexpectedEndOfString: "a string is not closed",
  UnexpectedEndOfComment: "a comment is not closed",
};

function describeParseError(code: string): string {
  return PARSE_ERRORS[code] ?? code;
}
