import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { type Logger, silentLogger } from "../../log.ts";
import { resetSafeSockets } from "./reset-safe-socket.ts";

/** A server on 127.0.0.1 that answers each connection's first bytes by resetting it. */
let server: net.Server;
let port = 0;
beforeAll(async () => {
  server = net.createServer((socket) => {
    socket.on("error", () => {});
    socket.once("data", () => socket.resetAndDestroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const target = () => ({ host: ["127.0.0.1"], port: [port] });

function watchingLogger(lines: string[]): Logger {
  const logger: Logger = { ...silentLogger, debug: (line) => lines.push(line), child: () => logger };
  return logger;
}

describe("the store client's sockets", () => {
  test("an error after the client took its listeners off is logged, where a plain socket would throw it", () => {
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    const plain = new net.Socket();
    expect(() => plain.emit("error", reset)).toThrow("ECONNRESET");
    plain.destroy();

    const lines: string[] = [];
    const socket = resetSafeSockets(watchingLogger(lines))(target());
    socket.removeAllListeners();
    expect(socket.emit("error", reset)).toBe(false);
    expect(lines).toEqual(["store: a closed connection reported ECONNRESET"]);
    socket.destroy();
  });

  test("while the client listens, a real reset reaches it, and what it wrote before the connect was sent", async () => {
    const socket = resetSafeSockets(silentLogger)(target());
    const events: string[] = [];
    const closed = new Promise<void>((resolve) => {
      socket.on("error", (error: NodeJS.ErrnoException) => events.push(`error ${error.code}`));
      socket.on("close", () => {
        events.push("close");
        resolve();
      });
    });
    // Written at once, as the postgres package writes its start-up message: held until connected.
    socket.write("startup");
    await closed;
    expect(events).toEqual(["error ECONNRESET", "close"]);
  });

  test("connections go to the hosts in turn, and a Unix socket's path when there is one", async () => {
    const sockets = resetSafeSockets(silentLogger);
    const hosts = { host: ["127.0.0.1", "localhost"], port: [port, port] };
    const made = [sockets(hosts), sockets(hosts), sockets(hosts)] as (net.Socket & { host?: string })[];
    expect(made.map((socket) => socket.host)).toEqual(["127.0.0.1", "localhost", "127.0.0.1"]);
    for (const socket of made) socket.destroy();

    const missing = sockets({ host: [], port: [], path: "/nonexistent/.s.PGSQL.5432" });
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => missing.once("error", resolve));
    expect(error.code).toBe("ENOENT");
  });
});
