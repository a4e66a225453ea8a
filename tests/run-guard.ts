import { dlopen, FFIType } from "bun:ffi";
import { afterAll, afterEach, beforeEach, setDefaultTimeout } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { markTestStart, stopStartedInTest } from "./test-scope.ts";

/**
 * Preloaded into every `bun test` run (bunfig.toml). Three guards a busy machine and a forgetful test
 * need:
 *
 * - No test runs on Bun's 5 s default timeout: on a loaded 2-core machine a test that starts a proxy
 *   and its servers can take longer than that without anything being wrong. Files that need more
 *   still say so with their own `setDefaultTimeout` or a per-test timeout.
 * - What the test helpers start during a test (a proxy, a fixture server, a client) is stopped when
 *   the test ends, pass or fail (test-scope.ts).
 * - The run ends with a check that no process it started is still running: every test closes what
 *   it starts, even when it fails. The runner becomes a child subreaper (Linux), so a server whose
 *   proxy was killed, and would otherwise be adopted by init and escape notice, is adopted by the
 *   runner instead; at the end, every live descendant is named with the test file that spawned it
 *   (or its ancestor), killed, and the run fails.
 */
setDefaultTimeout(60_000);

const ROOT = resolve(import.meta.dir, "..");
/** How long the end of the run waits for processes that are already on their way out. */
const GRACE_MS = 10_000;

/** pid → the test file that was running when it was spawned (Bun.main is the current test file). */
const spawnedIn = new Map<number, string>();
const spawn = Bun.spawn;
Bun.spawn = ((...args: Parameters<typeof Bun.spawn>) => {
  const child = spawn(...args);
  const pid = child.pid;
  spawnedIn.set(pid, relative(ROOT, Bun.main));
  // Forgotten once it exits: its pid may be given to another process later.
  void child.exited.then(() => spawnedIn.delete(pid));
  return child;
}) as typeof Bun.spawn;

becomeSubreaper();

beforeEach(markTestStart);
afterEach(stopStartedInTest);

afterAll(async () => {
  const deadline = Date.now() + GRACE_MS;
  let left = liveDescendants(process.pid);
  while (left.length > 0 && Date.now() < deadline) {
    await Bun.sleep(200);
    left = liveDescendants(process.pid);
  }
  if (left.length === 0) return;
  const lines = left.map((proc) => `  pid ${proc.pid} (${origin(proc)}): ${proc.command}`);
  for (const proc of left) {
    try {
      process.kill(proc.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(
    `${left.length} process(es) started by the tests were still running at the end of the run (now killed). Each test must stop what it starts, even when it fails:\n${lines.join("\n")}`,
  );
});

interface Proc {
  pid: number;
  ppid: number;
  command: string;
}

/** Every live process below `root`, parents before children; zombies (already exited) are not counted. */
function liveDescendants(root: number): Proc[] {
  const all = readProcesses();
  const children = new Map<number, Proc[]>();
  for (const proc of all.values()) {
    const siblings = children.get(proc.ppid) ?? [];
    siblings.push(proc);
    children.set(proc.ppid, siblings);
  }
  const found: Proc[] = [];
  const queue = [...(children.get(root) ?? [])];
  for (let proc = queue.shift(); proc; proc = queue.shift()) {
    found.push(proc);
    queue.push(...(children.get(proc.pid) ?? []));
  }
  return found;
}

function readProcesses(): Map<number, Proc> {
  const procs = new Map<number, Proc>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ')'.
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z" || state === "X") continue;
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      procs.set(Number(name), { pid: Number(name), ppid: Number(ppid), command });
    } catch {
      // exited while being read
    }
  }
  return procs;
}

/** Where a leftover came from: the test file that spawned it, or the one that spawned its ancestor. */
function origin(proc: Proc): string {
  const procs = readProcesses();
  for (let current: Proc | undefined = proc; current; current = procs.get(current.ppid)) {
    const file = spawnedIn.get(current.pid);
    if (file) return `spawned in ${file}`;
    if (current.ppid === process.pid) break;
  }
  return "its parent exited; adopted by the test runner";
}

/**
 * prctl(PR_SET_CHILD_SUBREAPER): orphans below the runner are re-parented to it rather than to init,
 * so the end-of-run check sees them. Linux only; elsewhere the check sees live descendants only.
 */
function becomeSubreaper(): void {
  if (process.platform !== "linux") return;
  try {
    const { i32, u64 } = FFIType;
    const libc = dlopen("libc.so.6", { prctl: { args: [i32, u64, u64, u64, u64], returns: i32 } });
    const PR_SET_CHILD_SUBREAPER = 36;
    libc.symbols.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  } catch {
    // musl or no FFI: the check still sees every live descendant whose parent is alive.
  }
}
