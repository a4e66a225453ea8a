import net from "node:net";
import type { Logger } from "../../log.ts";

/**
 * The sockets the store's client connects with. When a connection closes, the `postgres` package
 * takes every listener off its socket; under Bun the socket can still report the connection's
 * reset after that (a server that stopped while a message was on its way: `read ECONNRESET`), and
 * an 'error' with no listener is an uncaught exception, which would end a `serve --store` whose
 * PostgreSQL restarts. A socket made here reports such a late error to the log instead; while the
 * client listens, every error reaches it as before.
 */
class ResetSafeSocket extends net.Socket {
  constructor(private readonly logger: Logger | undefined) {
    super();
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === "error" && this.listenerCount("error") === 0) {
      const error = args[0] as { code?: string; message?: string } | undefined;
      this.logger?.debug(
        `store: a closed connection reported ${error?.code ?? error?.message ?? "an error"}`,
      );
      return false;
    }
    return super.emit(event, ...args);
  }
}

/** What the `postgres` package hands its socket factory: the hosts and ports it parsed, or a Unix socket's path. */
interface SocketTarget {
  host: string[];
  port: number[];
  path?: string | false;
}

type KnownSocket = net.Socket & { host?: string; port?: number };

/**
 * The `socket` option of the `postgres` package: each new connection's socket, connecting to the
 * next host in turn (as the package does itself), or to the Unix socket. The package writes its
 * start-up message at once, which the socket holds until it is connected, and its connect timeout
 * runs from there as without this option.
 */
export function resetSafeSockets(logger: Logger | undefined): (target: SocketTarget) => net.Socket {
  let next = 0;
  return (target) => {
    const socket: KnownSocket = new ResetSafeSocket(logger);
    if (target.path) {
      socket.connect(target.path);
      return socket;
    }
    const index = next % Math.max(1, target.host.length);
    next = index + 1;
    const host = target.host[index] ?? "localhost";
    const port = target.port[index] ?? target.port[0] ?? 5432;
    // The package reads these for TLS's server name, as when it connects the socket itself.
    socket.host = host;
    socket.port = port;
    socket.connect(port, host);
    return socket;
  };
}
