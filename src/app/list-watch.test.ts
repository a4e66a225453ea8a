import { describe, expect, test } from "bun:test";
import type { CapabilityApprovals } from "../index/capability-approvals.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { createListLook } from "./list-watch.ts";

/** A pool of `count` connected servers offering prompts, which counts the walks over them. */
function poolOf(count: number) {
  const capabilities = { prompts: {} };
  let servers = Array.from({ length: count }, (_, i) => ({
    server: `s${i}`,
    connection: { client: { getServerCapabilities: () => capabilities } },
    connectedSince: 1,
  }));
  let version = 1;
  const walks = { count: 0 };
  const pool = {
    live: () => {
      walks.count++;
      return servers;
    },
    liveVersion: () => version,
  } as unknown as Pick<UpstreamPool, "live" | "liveVersion">;
  const change = (next: typeof servers) => {
    servers = next;
    version++;
  };
  return { pool, walks, change, servers: () => servers };
}

const approvals = {
  version: () => "1",
  serverHold: () => undefined,
  held: () => [],
} as unknown as CapabilityApprovals;

describe("the list watch's look", () => {
  test("walks the connected servers only when the pool's live servers changed", () => {
    const { pool, walks, change, servers } = poolOf(2_000);
    const look = createListLook({ pool, approvals: () => approvals });
    const first = look();
    const walked = walks.count;
    expect(walked).toBeGreaterThan(0);
    for (let i = 0; i < 50; i++) expect(look()).toBe(first);
    expect(walks.count).toBe(walked);

    change(servers().slice(1));
    const after = look();
    expect(walks.count).toBeGreaterThan(walked);
    expect(after.prompts).not.toBe(first.prompts);
    expect(JSON.parse(after.prompts)[0]).toHaveLength(1_999);
  });
});
