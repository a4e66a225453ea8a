#!/usr/bin/env bun
/**
 * The floor for any stdio proxy: a relay that copies bytes between its stdin/stdout and a child
 * server's, understanding nothing. call-overhead.ts measures it beside mcpproxy, so a ratio can be
 * read against what the two extra pipe hops cost by themselves.
 *
 *   bun bench/byte-relay.ts COMMAND [ARGS…]
 */
export {};

const [command, ...args] = process.argv.slice(2);
if (!command) throw new Error("usage: byte-relay.ts COMMAND [ARGS…]");
const child = Bun.spawn([command, ...args], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
void (async () => {
  for await (const chunk of child.stdout) process.stdout.write(chunk);
})();
for await (const chunk of Bun.stdin.stream()) {
  child.stdin.write(chunk);
  child.stdin.flush();
}
child.kill();
