import { describe, expect, spyOn, test } from "bun:test";
import type { ServerConfig } from "../config/parse-server.ts";
import { silentLogger } from "../log.ts";
import * as redaction from "../security/redact-secrets.ts";
import { createPoolStates } from "./pool-states.ts";
import { type Slot, slotOf, slotSetter } from "./slot.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";
import { createUpstreamPool } from "./upstream-pool.ts";
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

/** What a walk over every slot in the pool answers: what the pool worked out per question before it kept its states. */
function walked(slots: readonly Slot[]) {
  const here = slots.filter((slot) => !slot.isRetired).sort((a, b) => a.seq - b.seq);
  return {
    connecting: here.filter((slot) => slot.state === "connecting").map((slot) => slot.config.name),
    isStarting: here.some(
      (slot) =>
        slot.state === "connecting" ||
        slot.state === "restarting" ||
        (slot.state === "configured" && !slot.config.lazy),
    ),
    live: here.filter((slot) => slot.connection !== undefined).map((slot) => slot.config.name),
  };
}

/** A deterministic stand-in for Math.random: the same run of changes every time. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe("the kept states against a walk", () => {
  test("answer as a walk over the slots would after every change of a long run", () => {
    const random = seeded(36);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const configs = Array.from({ length: 6 }, (_, i) =>
      server(`s${String(i).padStart(2, "0")}`, i % 3 === 0 ? { lazy: true } : {}),
    );
    const { states, set, slots } = poolOf(...configs);
    /** Every slot ever made, retired ones too: a late change to one must count for nothing. */
    const all = [...slots];
    let nextSeq = slots.length;
    const changes: ((slot: Slot) => void)[] = [
      (slot) => set(slot, { state: "connecting" }),
      (slot) => set(slot, { state: "restarting", connection: undefined, error: "session lost" }),
      // Each connect a connection of its own, as a reconnect makes: the live servers' stamp tells them apart.
      (slot) => set(slot, { state: "connected", connection: {} as UpstreamConnection, error: undefined }),
      (slot) => set(slot, { state: "failed", connection: undefined, error: "refused" }),
      (slot) => set(slot, { state: "needs-login", connection: undefined, error: "log in" }),
      (slot) => set(slot, { state: "configured", connection: undefined }),
      (slot) => set(slot, { toolCount: 3 }),
      (slot) => {
        // A config change: the slot retired, a new one in its place.
        if (slot.isRetired) return;
        slot.isRetired = true;
        set(slot, { connection: undefined });
        const replacement = slotOf({ ...slot.config }, subscriptions, slot.seq);
        states.track(replacement);
        slots[slots.indexOf(slot)] = replacement;
        all.push(replacement);
      },
      () => {
        // A new server, added at the end of the config (a few: the answers must still empty out often).
        if (slots.length >= 10) return;
        const added = slotOf(server(`n${nextSeq}`), subscriptions, nextSeq++);
        states.track(added);
        slots.push(added);
        all.push(added);
      },
    ];
    let connectingSeen = 0;
    let startingSeen = 0;
    let liveSeen = 0;
    let liveChanges = 0;
    const ids = new WeakMap<object, number>();
    let lastId = 0;
    const idOf = (value: object) => {
      if (!ids.has(value)) ids.set(value, ++lastId);
      return ids.get(value);
    };
    /** Which slots are live, with which connection: what the list watch's cheap look stood for. */
    const liveStamp = () =>
      all
        .filter((slot) => !slot.isRetired && slot.connection)
        .sort((a, b) => a.seq - b.seq)
        .map((slot) => `${slot.config.name}#${idOf(slot.connection!)}`)
        .join(" ");
    let stamp = liveStamp();
    let version = states.liveVersion();
    for (let step = 0; step < 3_000; step++) {
      // Mostly a slot in the pool; now and then any, a retired one's late change included.
      pick(changes)(random() < 0.8 ? pick(slots) : pick(all));
      const walk = walked(all);
      expect(states.connecting()).toEqual(walk.connecting);
      expect(states.isStarting()).toBe(walk.isStarting);
      expect(states.live().map((slot) => slot.config.name)).toEqual(walk.live);
      // The live servers changed (which, or their connection): the version moved.
      const nowStamp = liveStamp();
      if (nowStamp !== stamp) {
        liveChanges++;
        expect(states.liveVersion()).not.toBe(version);
      }
      stamp = nowStamp;
      version = states.liveVersion();
      if (walk.connecting.length > 0) connectingSeen++;
      if (walk.isStarting) startingSeen++;
      if (walk.live.length > 0) liveSeen++;
    }
    // The run went through every kind of answer, not only empty ones.
    expect(connectingSeen).toBeGreaterThan(100);
    expect(startingSeen).toBeGreaterThan(100);
    expect(liveSeen).toBeGreaterThan(100);
    expect(liveChanges).toBeGreaterThan(100);
    expect(all.filter((slot) => slot.isRetired).length).toBeGreaterThan(10);
  });

  test("the list of servers connecting is the same array until it changes", () => {
    const { states, set, slots } = poolOf(server("a"), server("b"));
    const first = states.connecting();
    set(slots[0]!, { toolCount: 2 });
    set(slots[1]!, { state: "connecting" });
    expect(states.connecting()).toBe(first);
    set(slots[1]!, { state: "failed", error: "refused" });
    const second = states.connecting();
    expect(second).not.toBe(first);
    expect(second).toEqual(["a"]);
    expect(first).toEqual(["a", "b"]);
  });
});

describe("a slot's error", () => {
  test("is redacted once, when stored: other changes and reads of the status redact nothing again", async () => {
    const redacting = spyOn(redaction, "redactSecrets");
    try {
      const { set, slots } = poolOf(server("a"));
      const slot = slots[0]!;
      redacting.mockClear();
      set(slot, { state: "failed", error: "token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB" });
      expect(redacting).toHaveBeenCalledTimes(1);
      set(slot, { state: "restarting" });
      set(slot, { toolCount: 4 });
      set(slot, { state: "failed" });
      expect(redacting).toHaveBeenCalledTimes(1);
      expect(slot.error).toBe("token [REDACTED:github-token]");

      // A pool's status, read as /health and the status page read it: the stored text, not redacted again.
      const pool = createUpstreamPool({
        servers: [
          {
            ...server("broken"),
            configProblem: "API_KEY=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB is not usable",
          },
        ],
        logger: silentLogger,
      });
      try {
        redacting.mockClear();
        for (let i = 0; i < 10; i++) {
          const [status] = pool.status();
          expect(status?.state).toBe("failed");
          expect(status?.error).toBe("broken is not started: API_KEY=[REDACTED:github-token] is not usable");
        }
        expect(redacting).toHaveBeenCalledTimes(0);
      } finally {
        await pool.close();
      }
    } finally {
      redacting.mockRestore();
    }
  });

  test("the same error at every retry is redacted once; a different one is redacted as it comes", () => {
    const redacting = spyOn(redaction, "redactSecrets");
    try {
      const { set, slots } = poolOf(server("a"));
      const slot = slots[0]!;
      redacting.mockClear();
      const refused = "refused at 127.0.0.1:9 token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
      for (let i = 0; i < 5; i++) {
        set(slot, { state: "restarting" });
        set(slot, { state: "failed", error: refused });
        expect(slot.error).toBe("refused at 127.0.0.1:9 token [REDACTED:github-token]");
      }
      expect(redacting).toHaveBeenCalledTimes(1);
      set(slot, { state: "failed", error: "timed out; key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345" });
      expect(redacting).toHaveBeenCalledTimes(2);
      expect(slot.error).not.toContain("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345");
      set(slot, { state: "failed", error: refused });
      expect(redacting).toHaveBeenCalledTimes(3);
      expect(slot.error).toBe("refused at 127.0.0.1:9 token [REDACTED:github-token]");
    } finally {
      redacting.mockRestore();
    }
  });

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
