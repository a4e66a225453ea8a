import type { Socket } from "bun";

/**
 * A TCP forwarder on 127.0.0.1 in front of a server, with a gate: while closed, new connections
 * are accepted but not forwarded (the client waits, as for a slow network) until it opens. Lets a
 * test hold one client away from PostgreSQL while others use it.
 */
export interface TcpGate {
  port: number;
  /** New connections wait; those already forwarded carry on. */
  close(): void;
  /** Forwards the waiting connections and every new one. */
  open(): void;
  stop(): void;
}

interface Link {
  upstream?: Socket<Link> | undefined;
  client: Socket<Link>;
  pending: Uint8Array[];
}

export function startTcpGate(target: { host: string; port: number }): TcpGate {
  let isOpen = true;
  const waiting: Link[] = [];
  const links = new Set<Link>();

  const forward = (link: Link) => {
    void Bun.connect<Link>({
      hostname: target.host,
      port: target.port,
      data: link,
      socket: {
        open(upstream) {
          link.upstream = upstream;
          for (const chunk of link.pending.splice(0)) upstream.write(chunk);
        },
        data(_upstream, chunk) {
          link.client.write(chunk);
        },
        close() {
          link.client.end();
        },
        error() {
          link.client.end();
        },
      },
    }).catch(() => link.client.end());
  };

  const server = Bun.listen<Link>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        const link: Link = { client, pending: [] };
        client.data = link;
        links.add(link);
        if (isOpen) forward(link);
        else waiting.push(link);
      },
      data(client, chunk) {
        const link = client.data;
        if (link.upstream) link.upstream.write(chunk);
        else link.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.upstream?.end();
        links.delete(client.data);
      },
      error(client) {
        client.data.upstream?.end();
      },
    },
  });

  return {
    port: server.port,
    close: () => {
      isOpen = false;
    },
    open: () => {
      isOpen = true;
      for (const link of waiting.splice(0)) forward(link);
    },
    stop: () => {
      for (const link of links) {
        link.upstream?.end();
        link.client.end();
      }
      server.stop(true);
    },
  };
}
