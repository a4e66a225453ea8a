import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { cleanupAfterEach, modernEntry, type Sandbox, startHttpProxy } from "./helpers.ts";
import { freshDatabase } from "./support/store-databases.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(90_000);

/**
 * "Any replica answers any modern request": a 2026-07-28 MRTR requestState minted by one
 * `serve --store` replica is opened by another on the same store (the sealing key is the store's,
 * shared-store.ts), and refused by a proxy that does not share it.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const scope = cleanupAfterEach();
const KEY = randomBytes(32).toString("hex");
let pg: TempPostgres;

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  await pg?.cleanup();
});

type Raw = Record<string, unknown> & {
  resultType?: string;
  inputRequests?: Record<string, { method: string }>;
  requestState?: string;
  content?: { text?: string }[];
};

/** A replica: its own data dir, the same config (a 2026 server that asks for a name) and store. */
async function replica(store: string | undefined) {
  const sandbox: Sandbox = scope.sandbox();
  sandbox.writeConfig({
    mcpServers: { new: modernEntry({ args: ["--modern-only", "--input-tools", "--name", "new"] }) },
  });
  const proxy = await startHttpProxy(sandbox, store ? ["--store", store] : [], { MCPPROXY_STORE_KEY: KEY });
  scope.defer(() => proxy.stop());
  const client = new Client({ name: "modern", version: "1" }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
    inputRequired: { autoFulfill: false },
  } as never);
  await client.connect(new StreamableHTTPClientTransport(proxy.url));
  scope.defer(() => client.close());
  return (params: Record<string, unknown>) =>
    client.request(
      { method: "tools/call", params } as never,
      { allowInputRequired: true } as never,
    ) as Promise<Raw>;
}

const ASK = { name: "call_tool", arguments: { name: "new__ask_name", arguments: { greeting: "hi" } } };

describe.skipIf(!hasPostgres)("requestState across replicas", () => {
  test("a requestState minted by replica A is accepted by replica B, and refused by a proxy outside the store", async () => {
    const url = await freshDatabase(pg);
    // Started together: they also agree on one key when they make it at the same moment.
    const [a, b] = await Promise.all([replica(url), replica(url)]);
    const loner = await replica(undefined);
    const first = await a(ASK);
    expect(first.resultType).toBe("input_required");
    expect(first.requestState).toStartWith("mcpproxy.1.");
    const [key] = Object.keys(first.inputRequests ?? {});
    const retry = {
      ...ASK,
      inputResponses: { [key!]: { action: "accept", content: { answer: "Ada" } } },
      requestState: first.requestState,
    };
    const answered = await b(retry);
    expect(answered.resultType ?? "complete").toBe("complete");
    expect((answered.content ?? []).map((part) => part.text).join("")).toBe("hi, Ada");
    // A proxy with its own key (the data dir's) cannot open it: the test would pass on nothing otherwise.
    const refused = await loner(retry).then(
      () => undefined,
      (error: { code?: number; message?: string }) => error,
    );
    expect(refused?.code).toBe(-32602);
  });
});
