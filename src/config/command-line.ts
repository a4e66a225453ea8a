/**
 * Splits a command line into argv the way a POSIX shell splits words, without running a shell:
 * whitespace separates words, 'single quotes' keep everything, "double quotes" keep everything but
 * \" and \\, and a backslash outside quotes escapes the next character. No variables, globs or
 * pipes: a command that needs those asks for a shell itself (`sh -c '…'`).
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let hasWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) word += line[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      hasWord = true;
    } else if (char === "\\" && i + 1 < line.length) {
      word += line[++i];
      hasWord = true;
    } else if (/\s/.test(char)) {
      if (hasWord) words.push(word);
      word = "";
      hasWord = false;
    } else {
      word += char;
      hasWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote`);
  if (hasWord) words.push(word);
  return words;
}
