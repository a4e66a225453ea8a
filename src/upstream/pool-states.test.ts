import { describe, expect, test } from "bun:test";
import type { ServerConfig } from "../config/parse-server.ts";
import { createPoolStates } from "./pool-states.ts";
import { type Slot, slotOf, slotSetter } from "./slot.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";
import type { UpstreamSubscriptions } from "./upstream-subscriptions.ts";

const subscriptions = {} as UpstreamSubscriptions;
const connection = {} as UpstreamConnection;
const server = (name: string, extra: Partial<ServerConfig> = {}) =>
  ({ name, enabled: true, transport: "stdio", command: "x", args: [], env: {}, ...extra }) as ServerConfig;

/** A pool's kept states over slots made and changed as the pool makes and changes them. */
function poolOf(...configs: ServerConfig[]) {
  const states = createPoolStates();
  const set = slotSetter(states.track);
  const slots = configs.map((config, seq) => {
    const slot = slotOf(config, subscriptions, seq);
    states.track(slot);
    return slot;
  });
  return { states, set, slots };
}

describe("the states a pool keeps", () => {
  test("servers still connecting are listed in the config's order, whatever order they change in", () => {
    const { states, set, slots } = poolOf(server("a"), server("b"), server("c"));
    expect(states.connecting()).toEqual(["a", "b", "c"]);
    set(slots[1]!, { state: "connected", connection });
    expect(states.connecting()).toEqual(["a", "c"]);
    set(slots[2]!, { state: "failed", error: "refused" });
    set(slots[0]!, { state: "failed", error: "refused" });
    expect(states.connecting()).toEqual([]);
    expect(states.live().map((slot) => slot.config.name)).toEqual(["b"]);
  });

  test("a reconnect is starting but not connecting; lazy, disabled and awaiting servers are neither", () => {
    const { states, set, slots } = poolOf(
      server("lazy", { lazy: true }),
      server("off", { enabled: false }),
      server("held", { awaitingApproval: "launch" }),
      server("up"),
    );
    expect(states.connecting()).toEqual(["up"]);
    expect(states.isStarting()).toBe(true);
    set(slots[3]!, { state: "connected", connection });
    expect(states.isStarting()).toBe(false);
    set(slots[3]!, { state: "restarting", connection: undefined, error: "session lost" });
    expect(states.isStarting()).toBe(true);
    expect(states.connecting()).toEqual([]);
    expect(states.live()).toEqual([]);
  });

  test("a slot taken out of the pool counts for nothing, even when its last connect settles later", () => {
    const { states, set, slots } = poolOf(server("a"), server("b"));
    const gone = slots[0]!;
    gone.isRetired = true;
    set(gone, { connection: undefined });
    expect(states.connecting()).toEqual(["b"]);
    set(gone, { state: "connecting" });
    set(gone, { state: "connected", connection });
    expect(states.connecting()).toEqual(["b"]);
    expect(states.live()).toEqual([]);
  });

  test("a slot that replaces another (a config change) takes its place in the order", () => {
    const { states, set, slots } = poolOf(server("a"), server("b"), server("c"));
    const old = slots[0]!;
    old.isRetired = true;
    set(old, { connection: undefined });
    const replacement: Slot = slotOf(server("a", { args: ["--new"] }), subscriptions, old.seq);
    states.track(replacement);
    expect(states.connecting()).toEqual(["a", "b", "c"]);
  });
});

describe("a slot's error", () => {
  test("is redacted as it is stored, so the status shows it as it is", () => {
    const { set, slots } = poolOf(server("a"));
    set(slots[0]!, {
      state: "failed",
      error: "login refused: token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
    });
    expect(slots[0]!.error).toBe("login refused: token [REDACTED:github-token]");
    set(slots[0]!, { state: "connected", connection, error: undefined });
    expect(slots[0]!.error).toBeUndefined();
  });

  test("a failing server keeps the time it went down until it works again", () => {
    const { set, slots } = poolOf(server("a"));
    const slot = slots[0]!;
    set(slot, { state: "failed", error: "refused" });
    const since = slot.downSince;
    expect(since).toBeNumber();
    set(slot, { state: "restarting" });
    set(slot, { state: "failed", error: "refused again" });
    expect(slot.downSince).toBe(since!);
    set(slot, { state: "connected", connection, error: undefined });
    expect(slot.downSince).toBeUndefined();
  });
});
