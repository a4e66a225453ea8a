import { valueDiff } from "../security/definition-diff.ts";
import { escapeUnshown } from "../security/hidden-characters.ts";
import type { PendingLaunch } from "../security/launch-spec.ts";
import { redactSecrets } from "../security/redact-secrets.ts";

/**
 * A launch spec an agent wrote, as `mcpproxy approve` shows it to the person who decides: what it
 * would run or connect to, exactly as written (`${VAR}` names, never their values), which of their
 * environment variables it would receive, and what changed since what could run before. Whatever
 * would not show as itself (controls, bidi overrides that reorder the line: "Trojan Source",
 * zero-width characters) is shown escaped as `\uXXXX`: the person approves the text that runs.
 */
const CHANGES = {
  added: "added by an agent",
  updated: "changed by an agent",
  enabled: "enabled by an agent",
} as const;

export function describeLaunch(pending: PendingLaunch): string[] {
  const { launch } = pending;
  const lines = [
    `${pending.server}: awaiting approval: ${CHANGES[pending.change] ?? CHANGES.added}${pending.at ? ` at ${pending.at}` : ""}`,
  ];
  const target =
    typeof launch.command === "string"
      ? `runs: ${[launch.command, ...(Array.isArray(launch.args) ? launch.args.map(String) : [])].map(quoted).join(" ")}`
      : `connects to: ${String(launch.url ?? launch.serverUrl ?? "?")}`;
  lines.push(`  ${target}`);
  for (const [key, value] of Object.entries(launch)) {
    if (key === "command" || key === "args" || key === "url" || key === "serverUrl") continue;
    lines.push(`  ${key}: ${JSON.stringify(value)}`);
  }
  const variables = [...new Set(pending.variables.map((variable) => variable.name))];
  // A local server also gets the small baseline every one gets (child-env.ts).
  const baseline =
    typeof launch.command === "string"
      ? " beyond the baseline (HOME, PATH, USER, locale, proxy and CA settings…)"
      : "";
  lines.push(
    launch.inheritEnv === true
      ? `  it would receive all of your environment variables (inheritEnv: true)`
      : variables.length > 0
        ? `  it would receive these variables of your environment${baseline}: ${variables
            .map(
              (name) =>
                `${name} (${pending.variables
                  .filter((v) => v.name === name)
                  .map((v) => v.at)
                  .join(", ")})`,
            )
            .join("; ")}`
        : `  it would receive none of your environment variables${baseline}`,
  );
  if (pending.before) {
    const diff = valueDiff(pending.before, launch);
    lines.push(diff.length > 0 ? "  changed since it could run:" : "  its launch spec is as it was before");
    for (const line of diff) lines.push(`    ${line}`);
  }
  return lines.map((line) => escapeUnshown(redactSecrets(line)));
}

/** What `approve` and `servers list` print as JSON, escaped as describeLaunch's lines are (still JSON). */
export function reviewJson(value: unknown): string {
  return escapeUnshown(JSON.stringify(value, null, 2), { keepLineBreaks: true });
}

function quoted(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word);
}
