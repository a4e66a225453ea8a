import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { isAlive } from "../store/sqlite/writer-lock.ts";

/**
 * The service as a process: whether a pid is one (a pid from a record a killed service left behind
 * may since belong to anything), and the command line that runs this mcpproxy again.
 */

/** The words that run the service in the foreground: what `start` spawns and the login units run. */
export const SERVICE_RUN_ARGS = ["service", "run"] as const;

/**
 * Whether `pid` runs `mcpproxy service run`. A signal is sent to it only then: a record a killed
 * service left names a pid the system may have handed to another program since. The command line
 * comes from /proc on Linux and from ps elsewhere; where neither answers, being alive is taken as
 * enough (the record is only ever written by the service itself, into the user's own data dir).
 */
export function isServiceProcess(pid: number): boolean {
  if (!isRunning(pid)) return false;
  const command = commandLineOf(pid);
  if (command === undefined) return true;
  return command.includes(SERVICE_RUN_ARGS.join(" "));
}

/**
 * Alive and not a zombie: a service that ended but that its parent has not reaped yet (a parent
 * other than init, such as a test runner) has stopped all the same.
 */
export function isRunning(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    // `PID (COMMAND) STATE …`: the state is the first field after the command's closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return true;
  }
}

function commandLineOf(pid: number): string | undefined {
  const proc = `/proc/${pid}/cmdline`;
  if (existsSync("/proc/self/cmdline")) {
    try {
      return readFileSync(proc, "utf8").split("\0").join(" ");
    } catch {
      return "";
    }
  }
  if (process.platform === "win32") return undefined;
  const ps = Bun.spawnSync(["ps", "-o", "command=", "-p", String(pid)], { stderr: "ignore" });
  return ps.exitCode === 0 ? ps.stdout.toString() : ps.exitCode === 1 ? "" : undefined;
}

/**
 * How to run this mcpproxy again: the binary alone, or the runtime and the script when run from
 * source (`bun main.ts`). In a compiled binary `process.argv[1]` is a path inside the binary.
 */
export function selfCommand(): string[] {
  const runtime = /^(bun|node)(\.exe)?$/.test(basename(process.execPath));
  const script = process.argv[1];
  return runtime && script ? [process.execPath, script] : [process.execPath];
}
