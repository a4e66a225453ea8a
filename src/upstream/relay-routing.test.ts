import { describe, expect, test } from "bun:test";
import type { ServerConfig } from "../config/parse-server.ts";
import type { ActiveCall, CallLog } from "./forward-call.ts";
import { type NoticeTarget, relayTo } from "./relay-routing.ts";

const log: CallLog = { level: "info", send: async () => {} };
const call = (tag: string, extra: Partial<ActiveCall> = {}): ActiveCall => ({
  caller: undefined,
  session: undefined,
  tag,
  waitOnClient: (work) => work(),
  ...extra,
});
const message = { method: "notifications/message", params: { level: "error", data: "x" } } as const;

/** Where a log message from the server goes while `active` calls are in flight on it. */
function targetOf(active: ActiveCall[]): NoticeTarget | undefined {
  let target: NoticeTarget | undefined;
  const relay = relayTo(
    {
      request: async () => ({}),
      notification: (_server, _notification, to) => {
        target = to;
      },
    },
    { config: { name: "srv" } as ServerConfig, active, callers: [] },
  );
  relay.onNotification(message);
  return target;
}

describe("a server's log message during 2026-07-28 calls (no client session)", () => {
  test("goes to the one call in flight on its own stream, when its request named a level", () => {
    expect(targetOf([call("c1", { log })])).toEqual({ log });
  });

  test("goes nowhere when that call named no level", () => {
    expect(targetOf([call("c1")])).toBe("unknown-call");
  });

  test("goes nowhere when two sessionless calls are in flight: each is a caller of its own", () => {
    expect(targetOf([call("c1", { log }), call("c2")])).toBe("unknown-call");
    expect(targetOf([call("c1"), call("c2", { log })])).toBe("unknown-call");
  });

  test("goes nowhere when a 2025 session's call is in flight beside it", () => {
    expect(targetOf([call("c1", { log }), call("c2", { caller: "s:1", session: "s" })])).toBe("unknown-call");
  });
});
