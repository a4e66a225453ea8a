import type { ContentBlock, Plugin } from "../../plugin-api.ts";

/**
 * The built-in truncation (MCPPROXY_TRUNCATE_OUTPUT_LEN=N): a text block with more than N + 50
 * characters keeps its first N characters, a marker that says how many were cut, and its last 50
 * (where errors and totals tend to be). Other blocks (images, audio, resources) and
 * structuredContent are left as they are. Runs after the other plugins (`post`), so a user's
 * transform sees the whole text.
 */
const TAIL_CHARS = 50;

export function truncateOutputPlugin(maxChars: number): Plugin {
  return {
    name: "truncate-output",
    order: "post",
    transformToolResult({ result }) {
      let isChanged = false;
      const content = result.content.map((block): ContentBlock => {
        if (block.type !== "text" || typeof block.text !== "string") return block;
        const text = truncateText(block.text, maxChars);
        if (text === block.text) return block;
        isChanged = true;
        return { ...block, text };
      });
      return isChanged ? { ...result, content } : undefined;
    },
  };
}

function truncateText(text: string, maxChars: number): string {
  const cut = text.length - maxChars - TAIL_CHARS;
  if (cut <= 0) return text;
  // Never split a surrogate pair: move each cut point off the middle of one.
  const headEnd = isLowSurrogate(text, maxChars) ? maxChars - 1 : maxChars;
  const tailStart = isLowSurrogate(text, text.length - TAIL_CHARS)
    ? text.length - TAIL_CHARS + 1
    : text.length - TAIL_CHARS;
  const removed = tailStart - headEnd;
  return `${text.slice(0, headEnd)}\n[... ${removed} characters cut by mcpproxy (MCPPROXY_TRUNCATE_OUTPUT_LEN=${maxChars}) ...]\n${text.slice(tailStart)}`;
}

/** Whether `at` is the second half of a surrogate pair (a cut there would split a character). */
export function isLowSurrogate(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff;
}
