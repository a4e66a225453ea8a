#!/usr/bin/env bun
/**
 * The floor for any proxy: a relay that copies bytes between its client and a server,
 * understanding nothing. call-overhead.ts measures it beside mcpproxy, so a ratio can be read
 * against what the two extra hops cost by themselves.
 *
 *   bun bench/byte-relay.ts COMMAND [ARGS…]     stdio: its stdin/stdout to a child server's
 *   bun bench/byte-relay.ts --http URL          HTTP: every request to URL's origin, the body streamed
 *                                              both ways; prints {"port":N} once it listens
 */
export {};

const [command, ...args] = process.argv.slice(2);
if (!command) throw new Error("usage: byte-relay.ts COMMAND [ARGS…] | --http URL");
if (command === "--http") {
  const upstream = new URL(args[0] ?? "");
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch(request) {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.delete("host");
      return fetch(new URL(url.pathname + url.search, upstream), {
        method: request.method,
        headers,
        body: request.body,
        redirect: "manual",
      });
    },
  });
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
} else {
  const child = Bun.spawn([command, ...args], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  void (async () => {
    for await (const chunk of child.stdout) process.stdout.write(chunk);
  })();
  for await (const chunk of Bun.stdin.stream()) {
    child.stdin.write(chunk);
    child.stdin.flush();
  }
  child.kill();
}
