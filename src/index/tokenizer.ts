/**
 * Splits text the way tool names and descriptions are written: camelCase and acronyms
 * (`getHTTPResponse` → get, http, response), snake_case, kebab-case, dotted names and prose
 * all become lowercase alphanumeric words. Used for both documents and queries so they agree.
 */
const CAMEL_BOUNDARY = /([a-z0-9])([A-Z])|([A-Z]+)([A-Z][a-z])/g;
const NON_ALPHANUMERIC = /[^\p{L}\p{N}]+/u;

export function tokenize(text: string): string[] {
  const spaced = text.replace(CAMEL_BOUNDARY, (_m, a, b, c, d) => (a ? `${a} ${b}` : `${c} ${d}`));
  const tokens: string[] = [];
  for (const word of spaced.toLowerCase().split(NON_ALPHANUMERIC)) if (word) tokens.push(word);
  return tokens;
}

/** Tool and parameter names as the words they are made of: `list_pull_requests` → "list pull requests". */
export function splitIdentifier(identifier: string): string {
  return tokenize(identifier).join(" ");
}
