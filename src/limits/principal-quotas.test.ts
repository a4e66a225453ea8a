import { describe, expect, test } from "bun:test";
import { limitRefusalOf } from "./call-gate.ts";
import { createPrincipalQuotas } from "./principal-quotas.ts";

describe("principal quotas", () => {
  const alice = { key: "oauth i alice", subject: "alice" };
  const bob = { key: "oauth i bob", subject: "bob" };

  test("refuses a principal's call past its quota, and not another principal's", async () => {
    let clock = 0;
    const quotas = createPrincipalQuotas(2, 100, () => clock);
    await quotas.take(alice, "s");
    await quotas.take(alice, "s");
    const refused = await quotas.take(alice, "s").catch((error: unknown) => error);
    expect(limitRefusalOf(refused)).toMatchObject({ server: "s", limit: "rate" });
    expect((refused as Error).message).toContain("Your call quota of 2 calls a minute");
    await quotas.take(bob, "s");
    clock += 30_000;
    await quotas.take(alice, "s");
  });

  test("takes a rule's own quota over the default, and 0 as no quota", async () => {
    const quotas = createPrincipalQuotas(1, 100, () => 0);
    for (let i = 0; i < 5; i++) await quotas.take({ ...alice, callsPerMinute: 0 }, "s");
    await quotas.take({ ...bob, callsPerMinute: 3 }, "s");
    await quotas.take({ ...bob, callsPerMinute: 3 }, "s");
    await quotas.take({ ...bob, callsPerMinute: 3 }, "s");
    expect(await quotas.take({ ...bob, callsPerMinute: 3 }, "s").catch(() => "refused")).toBe("refused");
  });
});
