import { invisibleCharacters, smuggledText } from "../../security/hidden-characters.ts";
import { readingsForScan } from "../../security/normalize-text.ts";
import { type ServerMentions, scanTool } from "../../security/poisoning-scan.ts";

/**
 * What retrieve_tools can find, said in its own description: agents skip a search tool that does
 * not say what it searches. One line per server (what it is for, how many tools, a few tool
 * names), largest first, bounded per line and in total, then the rest by name and "and N more".
 *
 * Everything quoted comes from upstreams and lands in the proxy's own tool description, which the
 * model trusts more than a tool result: only approved tools count (the caller passes no others),
 * a text with invisible characters is dropped whole, anything the poisoning scan flags is dropped,
 * and what is kept is the scan's reading of it (look-alike letters folded to ASCII) cut to a short
 * fragment of plain characters. A server whose instructions are dropped is described by words of
 * its tools instead.
 */
export interface ServerSketch {
  name: string;
  /** What the server said it is for (its `instructions`), as it sent them. */
  instructions?: string | undefined;
  /** Its approved tools, as shown to agents. */
  tools: readonly { name: string; description?: string | undefined }[];
  /**
   * How many they are, when `tools` is costly to read: it is then read only for the servers given
   * a line (app/description-sketches.ts reads their definitions from the catalog file).
   */
  toolCount?: number | undefined;
}

const countOf = (server: ServerSketch) => server.toolCount ?? server.tools.length;

/** What the proxy's server asks for its description (app/description-watch.ts keeps it). */
export interface SearchableServers {
  /** The servers part of retrieve_tools' description over this catalog: the whole one, or a profile's view. */
  current(catalog: object): string;
  /** Whether the text is likely to hold (a 2026 client may keep the list for its cache time). */
  isSettled(): boolean;
}

/**
 * The budgets, in characters (a token is about four characters of English). A line is at most
 * ~55 tokens; the lines together at most ~500, the names of the servers left out ~100 more, so the
 * whole description stays under ~800 tokens (the fixed text is ~160): the cost of three or four
 * ordinary tool definitions, paid once per session, whatever the number of servers.
 */
export const DESCRIPTION_BUDGET = {
  purposeChars: 100,
  toolNames: 3,
  toolNameChars: 32,
  lineChars: 220,
  linesChars: 2_000,
  restChars: 400,
} as const;

/** One server's line: its name and size always, what it is for and tool names when they are clean. */
export function serverLine(server: ServerSketch, mentions: ServerMentions): string {
  const name = plainName(server.name, 40);
  const count = `${countOf(server)} tool${countOf(server) === 1 ? "" : "s"}`;
  const clean = server.tools.filter((tool) => isClean(server.name, tool, mentions));
  const purpose = purposeFromInstructions(server, mentions) ?? purposeFromTools(server.name, clean, mentions);
  const names = [...new Set(clean.map((tool) => plainName(tool.name, DESCRIPTION_BUDGET.toolNameChars)))]
    .filter((toolName) => toolName !== "")
    .sort()
    .slice(0, DESCRIPTION_BUDGET.toolNames);
  let line = `- ${name} (${count})${purpose ? `: ${purpose}` : ""}`;
  if (names.length > 0) line += `${purpose ? " " : ": "}Tools: ${names.join(", ")}.`;
  return cut(line, DESCRIPTION_BUDGET.lineChars);
}

/**
 * The servers part of the description: lines of the largest servers (most approved tools) while
 * they fit the budget, then the others by name while those fit, then how many more. Ordered by
 * size then name only, so the same servers and tools always give the same text.
 */
export function describeServers<T extends ServerSketch>(
  servers: readonly T[],
  lineOf: (server: T) => string,
): string {
  const shown = servers
    .filter((server) => countOf(server) > 0)
    .sort((a, b) => countOf(b) - countOf(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (shown.length === 0) return "";
  const total = shown.reduce((sum, server) => sum + countOf(server), 0);
  const lines: string[] = [];
  let used = 0;
  let i = 0;
  for (; i < shown.length; i++) {
    const line = lineOf(shown[i]!);
    if (used + line.length + 1 > DESCRIPTION_BUDGET.linesChars) break;
    lines.push(line);
    used += line.length + 1;
  }
  const rest: string[] = [];
  let restUsed = 0;
  for (; i < shown.length; i++) {
    const name = `${plainName(shown[i]!.name, 40)} (${countOf(shown[i]!)})`;
    if (restUsed + name.length + 2 > DESCRIPTION_BUDGET.restChars) break;
    rest.push(name);
    restUsed += name.length + 2;
  }
  const more = shown.length - lines.length - rest.length;
  const moreServers = `${more} more server${more === 1 ? "" : "s"}`;
  const tail =
    rest.length === 0
      ? more > 0
        ? [`And ${moreServers}.`]
        : []
      : [`Also: ${rest.join(", ")}${more > 0 ? `, and ${moreServers}` : ""}.`];
  const heading =
    `It searches ${total} tool${total === 1 ? "" : "s"} of ${shown.length} server${shown.length === 1 ? "" : "s"}, ` +
    "largest first (as each describes itself):";
  return [heading, ...lines, ...tail].join("\n");
}

/** The first sentence of the server's instructions, when nothing in them is suspect. */
function purposeFromInstructions(server: ServerSketch, mentions: ServerMentions): string | undefined {
  const text = server.instructions?.trim();
  if (!text || isSuspect(server.name, text, mentions)) return undefined;
  const first = text.split(/\n\s*\n|(?<=[.!?])\s+|\n(?=\s*[-*#\d])/)[0] ?? "";
  const sentence = plainText(first);
  const purpose = cut(/[.!?]$/.test(sentence) ? sentence : `${sentence}.`, DESCRIPTION_BUDGET.purposeChars);
  // What is left after cleaning is judged again: cutting can change how a text reads.
  return purpose.length >= 8 && !isSuspect(server.name, purpose, mentions) ? purpose : undefined;
}

const STOP_WORDS = new Set(
  (
    "the a an and or of to in on for with by from as at is are be it its this that these those your you " +
    "can will may into via using use used get set list given new all any each one more not only when which " +
    "what who how also other than then there their them they returns return tool tools data value values " +
    "name names object objects string number optional required default specified specific id ids type " +
    "against run now about such like etc"
  ).split(" "),
);

/** A server without usable instructions: the words its tools use most, as "about: …". */
function purposeFromTools(
  server: string,
  tools: readonly ServerSketch["tools"][number][],
  mentions: ServerMentions,
): string | undefined {
  const counts = new Map<string, number>();
  for (const tool of tools) {
    const words = new Set(
      plainText(`${tool.name.replace(/[_.-]+/g, " ")} ${firstSentence(tool.description ?? "")}`)
        .toLowerCase()
        .match(/[a-z]{3,20}/g) ?? [],
    );
    for (const word of words) if (!STOP_WORDS.has(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const words = [...counts]
    .sort(([a, n], [b, m]) => m - n || (a < b ? -1 : 1))
    .slice(0, 5)
    .map(([word]) => word);
  if (words.length === 0) return undefined;
  const purpose = `about ${words.join(", ")}.`;
  return isSuspect(server, purpose, mentions) ? undefined : purpose;
}

/** The tool as the scan judges a definition: its name read as words, its description as text. */
function isClean(server: string, tool: ServerSketch["tools"][number], mentions: ServerMentions): boolean {
  const text = `${tool.name}\n${tool.description ?? ""}`;
  if (invisibleCharacters(text).length > 0 || smuggledText(text).length > 0) return false;
  return scanTool({ name: tool.name, description: tool.description }, server, mentions).length === 0;
}

/** Hidden characters, or anything the poisoning scan finds (orders to the model, other servers' tools). */
function isSuspect(server: string, text: string, mentions: ServerMentions): boolean {
  if (invisibleCharacters(text).length > 0 || smuggledText(text).length > 0) return true;
  return scanTool({ name: "description", description: text }, server, mentions).length > 0;
}

/** The scan's reading of a text (look-alikes folded), kept to plain letters, digits and punctuation. */
export function plainText(text: string): string {
  return readingsForScan(text)
    .words.replace(/[^A-Za-z0-9 .,;:()'/&+-]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** A server or tool name kept to the characters of tool names (a run of others becomes one "-"). */
function plainName(name: string, max: number): string {
  return name
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, max);
}

function firstSentence(text: string): string {
  return text.split(/(?<=[.!?])\s+|\n/)[0] ?? "";
}

/** At most `max` characters, cut at a word, with "..." when cut. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max - 3);
  const space = head.lastIndexOf(" ");
  return `${(space > max / 2 ? head.slice(0, space) : head).replace(/[ ,;:.-]+$/, "")}...`;
}
