import { ProxyError } from "../errors.ts";
import { openBrowser } from "../open-browser.ts";
import { loadOrCreateToken } from "../server/transport/bearer-token.ts";
import { originOf, runningService } from "../service/find-service.ts";
import type { CommandValues } from "./command.ts";
import { loadCommandConfig } from "./command-config.ts";

/**
 * `mcpproxy console` (its flags and help: console-command.ts): asks the proxy for a one-time sign-in
 * link with the data dir's token (what proves this is the person's own account), prints it, and
 * opens it with `$BROWSER` (or the desktop's opener). The proxy is the background service of this
 * data dir, else an HTTP serve at the config's host and port, or `--url`.
 */
export async function runConsoleCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const config = loadCommandConfig(values);
  const service = runningService(config.dataDir);
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const origin =
    (values.url as string | undefined)?.replace(/\/(mcp)?\/?$/, "") ??
    (service ? originOf(service) : `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`);
  const token = await loadOrCreateToken(config.dataDir, { mayCreate: false }).then(
    (found) => found.token,
    () => undefined,
  );
  let answer: Response;
  try {
    answer = await fetch(`${origin}/console/link`, {
      method: "POST",
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new ProxyError(
      "USAGE",
      `No mcpproxy answers at ${origin}. Start the background service with \`mcpproxy start\` ` +
        "(or `mcpproxy serve --transport http`), or name one with --url.",
    );
  }
  const body = (await answer.json().catch(() => ({}))) as { url?: string; error?: unknown };
  if (!answer.ok || typeof body.url !== "string") {
    const reason = typeof body.error === "string" ? body.error : `HTTP ${answer.status}`;
    throw new ProxyError(
      "USAGE",
      answer.status === 404
        ? `The mcpproxy at ${origin} has no console (an older version?): ${reason}`
        : `The mcpproxy at ${origin} did not give a sign-in link: ${reason}`,
    );
  }
  process.stdout.write(`Sign in to the console (the link works once, for 2 minutes):\n  ${body.url}\n`);
  if (!values["no-open"] && !(await openBrowser(body.url)))
    process.stdout.write("(no browser to open here: open the link yourself)\n");
  return 0;
}
