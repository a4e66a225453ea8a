import { login } from "../auth/login-flow.ts";
import { usesOAuth } from "../auth/upstream-auth.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError, ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { launchRefusal } from "../security/launch-spec.ts";

/**
 * The console's "Log in" of an OAuth server: the login flow `mcpproxy auth login` runs (its
 * callback listener, its lock, the data dir's store), whose authorization URL is handed to the
 * person's browser tab instead of a new browser. It resolves with that URL; the flow goes on in the
 * background until the browser comes back (or times out), and the running proxy picks the login up
 * as it does after the command. With a shared store the login is the command's (its records).
 */
export function consoleLogin(
  options: { dataDir: string; servers: () => readonly ServerConfig[]; isTeam: boolean },
  logger: Logger,
): (name: string) => Promise<string> {
  return (name) => {
    const server = options.servers().find((candidate) => candidate.name === name);
    if (!server || !usesOAuth(server))
      return Promise.reject(new ProxyError("USAGE", `${name} is not a server that logs in with OAuth.`));
    if (options.isTeam)
      return Promise.reject(
        new ProxyError(
          "USAGE",
          `With a shared store, log in with \`mcpproxy auth login ${name} --store URL\`.`,
        ),
      );
    const refusal = launchRefusal(server);
    if (refusal) return Promise.reject(new ProxyError("AWAITING_APPROVAL", refusal));
    return new Promise<string>((resolve, reject) => {
      login({ server, dataDir: options.dataDir, open: (url) => resolve(url.href) }).then(
        (outcome) =>
          logger.info(
            `${name}: ${outcome === "logged-in" ? "logged in" : "no login was needed"} (from the console)`,
          ),
        (error: unknown) => {
          reject(error);
          logger.warn(`${name}: the login from the console did not finish: ${describeError(error)}`);
        },
      );
    });
  };
}
