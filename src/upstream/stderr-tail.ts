/**
 * Keeps the last few lines a child wrote to stderr, so a failure can be reported with what the
 * server itself said, without holding on to an unbounded log.
 */
export interface StderrTail {
  push(chunk: string | Uint8Array): void;
  text(): string;
}

export function createStderrTail(maxLines = 20, maxChars = 4000): StderrTail {
  const decoder = new TextDecoder();
  let lines: string[] = [];
  let partial = "";
  return {
    push(chunk) {
      const text = partial + (typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
      const parts = text.split(/\r?\n/);
      partial = (parts.pop() ?? "").slice(-maxChars);
      for (const line of parts) if (line.trim() !== "") lines.push(line.slice(0, maxChars));
      if (lines.length > maxLines) lines = lines.slice(-maxLines);
    },
    text() {
      const all = partial.trim() === "" ? lines : [...lines, partial];
      let out = all.slice(-maxLines).join("\n");
      if (out.length > maxChars) out = `…${out.slice(-maxChars)}`;
      return out;
    },
  };
}
