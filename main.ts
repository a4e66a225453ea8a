#!/usr/bin/env bun
import { flushOutput } from "./src/cli/flush-output.ts";
import { runCli } from "./src/cli/run-cli.ts";
import { describeError, isProxyError } from "./src/errors.ts";

/** The entry point of the compiled binary, and the only place that calls process.exit. */
async function main(): Promise<number> {
  try {
    return await runCli(process.argv.slice(2));
  } catch (error) {
    if (isProxyError(error)) {
      const details = error.details.map((line) => `  ${line}\n`).join("");
      process.stderr.write(`mcpproxy: ${error.message}\n${details}`);
      return error.exitCode;
    }
    process.stderr.write(`mcpproxy: unexpected error: ${describeError(error)}\n`);
    if (process.env.MCPPROXY_LOG_LEVEL?.toLowerCase() === "debug" && error instanceof Error) {
      process.stderr.write(`${error.stack}\n`);
    }
    return 1;
  }
}

const code = await main();
const lost = await flushOutput();
process.exit(lost && code === 0 ? 1 : code);
