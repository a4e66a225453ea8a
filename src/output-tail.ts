import { redactSecrets } from "./security/redact-secrets.ts";

/**
 * Keeps the last few lines a child process wrote (a server's stderr, a hook's output), so a failure
 * can be reported with what the process itself said, without holding on to an unbounded log.
 */
export interface OutputTail {
  push(chunk: string | Uint8Array): void;
  text(): string;
}

export function createOutputTail(maxLines = 20, maxChars = 4000): OutputTail {
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
      // Shown in errors, summaries and /health: a server's output may echo a token it was given.
      return redactSecrets(out);
    },
  };
}
