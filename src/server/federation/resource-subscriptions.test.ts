import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../log.ts";
import { createResourceSubscriptions } from "./resource-subscriptions.ts";

const URI = "mcpproxy://caps/file:///etc/hostname";

/** A pool whose subscribe and unsubscribe answer when the test says, and log what reached the server. */
function slowPool() {
  const sent: string[] = [];
  const pending: { settle: (error?: Error) => void }[] = [];
  return {
    sent,
    /** Answers the oldest request in flight (with `error`, a refusal). */
    answer(error?: Error) {
      pending.shift()?.settle(error);
    },
    get inFlight() {
      return pending.length;
    },
    pool: {
      request: ((server: string, request: { method: string; params?: Record<string, unknown> }) => {
        sent.push(`${request.method} ${server} ${String(request.params?.uri)}`);
        return new Promise((resolve, reject) =>
          pending.push({ settle: (error) => (error ? reject(error) : resolve({})) }),
        );
      }) as never,
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("resource subscriptions", () => {
  test("the server is subscribed once for every holder and unsubscribed after the last, however they race", async () => {
    const server = slowPool();
    const subscriptions = createResourceSubscriptions({ pool: server.pool, logger: silentLogger });
    const first = subscriptions.add("a", URI);
    const second = subscriptions.add("b", URI);
    await tick();
    subscriptions.release("a"); // while the subscribe is still in flight
    server.answer();
    await Promise.all([first, second]);
    await tick();
    expect(server.sent).toEqual(["resources/subscribe caps file:///etc/hostname"]);
    subscriptions.release("b");
    await tick();
    server.answer();
    await tick();
    expect(server.sent).toEqual([
      "resources/subscribe caps file:///etc/hostname",
      "resources/unsubscribe caps file:///etc/hostname",
    ]);
  });

  test("a holder that comes while the last one's unsubscribe is in flight gets the server subscribed again", async () => {
    const server = slowPool();
    const subscriptions = createResourceSubscriptions({ pool: server.pool, logger: silentLogger });
    const first = subscriptions.add("a", URI);
    await tick();
    server.answer();
    await first;
    subscriptions.release("a");
    await tick();
    const again = subscriptions.add("b", URI);
    server.answer(); // the unsubscribe
    await tick();
    server.answer(); // the subscribe again
    await again;
    expect(server.sent.map((line) => line.split(" ")[0])).toEqual([
      "resources/subscribe",
      "resources/unsubscribe",
      "resources/subscribe",
    ]);
  });

  test("a refused subscribe holds nothing: the holder gets the server's error and nothing is unsubscribed", async () => {
    const server = slowPool();
    const subscriptions = createResourceSubscriptions({ pool: server.pool, logger: silentLogger });
    const refused = subscriptions.add("a", URI);
    await tick();
    server.answer(new Error("no such resource"));
    await expect(refused).rejects.toThrow("no such resource");
    subscriptions.release("a");
    await tick();
    expect(server.inFlight).toBe(0);
    expect(server.sent).toEqual(["resources/subscribe caps file:///etc/hostname"]);
  });

  test("a URI that is not this proxy's reaches no server", async () => {
    const server = slowPool();
    const subscriptions = createResourceSubscriptions({ pool: server.pool, logger: silentLogger });
    await expect(subscriptions.add("a", "file:///etc/passwd")).rejects.toThrow(
      /not a resource of this proxy/,
    );
    expect(server.sent).toEqual([]);
  });
});
