import { describe, expect, test } from "bun:test";
import { portRefusal } from "./port-check.ts";

/** A TCP port on 127.0.0.1 that was free when asked (nothing listens there now). */
function closedPort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  return port;
}

const NO_PROXY_ENV = {};

describe("the port check before a retry", () => {
  test("a port nothing listens on is a refusal that names the host and port, coded ECONNREFUSED", async () => {
    const port = closedPort();
    const refused = await portRefusal(`http://127.0.0.1:${port}/mcp`, 10_000, NO_PROXY_ENV);
    expect(refused?.message).toContain(`ECONNREFUSED: nothing accepts connections at 127.0.0.1:${port}`);
    expect((refused as { code?: string } | undefined)?.code).toBe("ECONNREFUSED");
  });

  test("a port that accepts leaves the decision to the full connect, and its connection is closed", async () => {
    let accepted = 0;
    let closed = 0;
    const listener = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open() {
          accepted++;
        },
        close() {
          closed++;
        },
        data() {},
      },
    });
    try {
      expect(
        await portRefusal(`http://127.0.0.1:${listener.port}/mcp`, 10_000, NO_PROXY_ENV),
      ).toBeUndefined();
      for (let i = 0; i < 200 && closed < 1; i++) await Bun.sleep(25);
      expect({ accepted, closed }).toEqual({ accepted: 1, closed: 1 });
    } finally {
      listener.stop(true);
    }
  });

  test("through a proxy the environment names, nothing is concluded from the server's own port", async () => {
    const url = `http://127.0.0.1:${closedPort()}/mcp`;
    for (const env of [{ HTTPS_PROXY: "http://proxy.example:3128" }, { http_proxy: "http://proxy:8080" }]) {
      expect(await portRefusal(url, 10_000, env)).toBeUndefined();
    }
  });

  test("a URL that does not parse is the full connect's to report", async () => {
    expect(await portRefusal("not a url", 10_000, NO_PROXY_ENV)).toBeUndefined();
  });
});
