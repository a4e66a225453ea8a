/**
 * Unknown keys are mistakes until shown otherwise: `mcpServer` for `mcpServers` used to give "no
 * servers" and exit 0, and a server's `arg` for `args` was dropped in silence. Every level of the
 * config is checked against the keys it knows, and an unknown key is a problem that names the
 * closest known one. Keys that other clients' formats use and that we deliberately leave alone
 * (listed in docs/configuration.md) pass.
 */
export interface KeyProblem {
  path: string;
  message: string;
}

/** Top-level keys of other clients' files that are not ours to read. */
export const IGNORED_TOP_LEVEL_KEYS: Readonly<Record<string, string>> = {
  $schema: "JSON schema reference",
  inputs: "VS Code prompts for values; use ${VAR} from the environment instead",
};

/** Server keys of other clients' formats that mcpproxy leaves alone. */
export const IGNORED_SERVER_KEYS: Readonly<Record<string, string>> = {
  autoApprove: "Cline, Roo Code",
  alwaysAllow: "Roo Code",
  timeout: "Cline (seconds); mcpproxy reads timeoutMs",
  transportType: "Cline",
  envFile: "VS Code",
  dev: "VS Code",
  description: "several clients",
};

export function unknownKeys(
  record: Readonly<Record<string, unknown>>,
  known: readonly string[],
  path: string,
  ignored: Readonly<Record<string, string>> = {},
): KeyProblem[] {
  return Object.keys(record)
    .filter((key) => !known.includes(key) && !(key in ignored))
    .map((key) => {
      const suggestion = closestKey(key, known);
      return {
        path: path ? `${path}.${key}` : key,
        message: `unknown key${suggestion ? ` (did you mean \`${suggestion}\`?)` : ` (known: ${known.join(", ")})`}`,
      };
    });
}

/** The known key a misspelling most likely meant: same letters but case, or a few edits away. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    if (candidate.toLowerCase() === key.toLowerCase()) return candidate;
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}
