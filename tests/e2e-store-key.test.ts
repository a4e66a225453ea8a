import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { hkdfSync, randomBytes, scryptSync } from "node:crypto";
import { createStoreKey } from "../src/store/store-key.ts";
import { cleanupAfterEach, runCli, type Sandbox, startHttpProxy } from "./helpers.ts";
import { freshDatabase, onDatabase } from "./support/store-databases.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(120_000);

/**
 * The attacker who can read the shared store (a backup, a read-only role, a dump): with a
 * passphrase for MCPPROXY_STORE_KEY, the check value and the sealed secrets must not let them test
 * guesses fast. Through the compiled binary against a real PostgreSQL: a passphrase is stretched
 * with scrypt under a salt and parameters kept beside the check value; a store set up before that
 * (HKDF alone) keeps working, says so, and `store rekey` seals it again with scrypt, or under a
 * random key.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const scope = cleanupAfterEach();
const PHRASE = "a team passphrase that is long enough to be a key";
let pg: TempPostgres;

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  await pg?.cleanup();
});

function operator(): Sandbox {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: {} });
  return sandbox;
}

const storeCli = (sandbox: Sandbox, args: string[], env: Record<string, string>) =>
  runCli(["store", ...args, "--config", sandbox.configPath], sandbox.env(env));

async function meta(url: string): Promise<Record<string, string>> {
  const rows = await onDatabase(
    url,
    (sql) => sql<{ key: string; value: string }[]>`SELECT key, value FROM mcpproxy.meta`,
  );
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}

/** What an attacker computes per guess: HKDF alone (the derivation before), or scrypt with the store's parameters. */
const checkOf = (key: Buffer) => createStoreKey(key).check;
const hkdfKey = (phrase: string) =>
  Buffer.from(hkdfSync("sha256", phrase, "mcpproxy-store", "mcpproxy store key", 32));
function scryptKey(phrase: string, paramsText: string): Buffer {
  const params = JSON.parse(paramsText) as { n: number; r: number; p: number; salt: string };
  return scryptSync(phrase, Buffer.from(params.salt, "base64"), 32, {
    N: params.n,
    r: params.r,
    p: params.p,
    maxmem: 512 * 1024 * 1024,
  });
}

async function replica(sandbox: Sandbox, url: string, key: string) {
  const proxy = await startHttpProxy(sandbox, ["--store", url], { MCPPROXY_STORE_KEY: key });
  scope.defer(() => proxy.stop());
  return proxy;
}

describe.skipIf(!hasPostgres)("a passphrase as MCPPROXY_STORE_KEY", () => {
  test("is stretched with scrypt: the parameters are kept beside the check value, the fast derivation does not match it", async () => {
    const url = await freshDatabase(pg);
    const sandbox = operator();
    const init = await storeCli(sandbox, ["init", "--store", url], { MCPPROXY_STORE_KEY: PHRASE });
    expect(init.code).toBe(0);
    const rows = await meta(url);
    expect(JSON.parse(rows.store_key_kdf!)).toMatchObject({ kdf: "scrypt", n: 2 ** 17, r: 8, p: 1 });
    expect(Buffer.from(JSON.parse(rows.store_key_kdf!).salt, "base64")).toHaveLength(16);
    // A guess tested the fast way no longer matches; only scrypt with the store's salt does.
    expect(rows.store_key_check).not.toBe(checkOf(hkdfKey(PHRASE)));
    expect(rows.store_key_check).toBe(checkOf(scryptKey(PHRASE, rows.store_key_kdf!)));
    // The request-state secret opens only with that key.
    const sealed = Buffer.from(rows.request_state_key!, "base64");
    expect(() => createStoreKey(hkdfKey(PHRASE)).open(sealed, "meta:request_state_key")).toThrow();
    expect(
      createStoreKey(scryptKey(PHRASE, rows.store_key_kdf!)).open(sealed, "meta:request_state_key"),
    ).toHaveLength(32);

    // Every replica with the passphrase opens it (nothing said of the key); another passphrase is refused.
    const proxy = await replica(operator(), url, PHRASE);
    await proxy.stop();
    expect(proxy.stderr.text()).not.toContain("HKDF");
    const wrong = await storeCli(sandbox, ["init", "--store", url], { MCPPROXY_STORE_KEY: `${PHRASE}.` });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("is not the key the shared store was set up with");
    expect((await meta(url)).store_key_kdf).toBe(rows.store_key_kdf!);
  });
});

describe.skipIf(!hasPostgres)(
  "a store set up before scrypt (its passphrase stretched with HKDF alone)",
  () => {
    /**
     * Such a store as the mcpproxy before this one left it: its check value and secrets under the
     * HKDF of the passphrase, no parameters; and a login sealed under that key.
     */
    async function legacyStore() {
      const url = await freshDatabase(pg);
      const legacy = hkdfKey(PHRASE);
      const init = await storeCli(operator(), ["init", "--store", url], {
        MCPPROXY_STORE_KEY: legacy.toString("hex"),
      });
      expect(init.code).toBe(0);
      const login = Buffer.from(JSON.stringify({ tokens: { access_token: "at-secret-1" } }));
      await onDatabase(url, async (sql) => {
        await sql`DELETE FROM mcpproxy.meta WHERE key = 'store_key_kdf'`;
        await sql`INSERT INTO mcpproxy.oauth_records (server, sealed) VALUES ('secure', ${createStoreKey(legacy).seal(login, "oauth:secure")})`;
      });
      const before = await meta(url);
      expect(before.store_key_check).toBe(checkOf(legacy));
      const stateKey = createStoreKey(legacy).open(
        Buffer.from(before.request_state_key!, "base64"),
        "meta:request_state_key",
      );
      return { url, legacy, login, stateKey };
    }

    async function loginOf(url: string): Promise<Buffer> {
      const [row] = await onDatabase(
        url,
        (sql) => sql<{ sealed: Buffer }[]>`SELECT sealed FROM mcpproxy.oauth_records WHERE server = 'secure'`,
      );
      return Buffer.from(row!.sealed);
    }

    test("keeps working with its passphrase and says so; store rekey, refused while a replica runs, then stretches it with scrypt", async () => {
      const { url, legacy, login, stateKey } = await legacyStore();
      const sandbox = operator();

      const proxy = await replica(operator(), url, PHRASE);
      expect(proxy.stderr.text()).toContain(
        "this store was set up by an mcpproxy that stretched it with HKDF alone",
      );
      expect(proxy.stderr.text()).toContain("mcpproxy store rekey");
      const busy = await storeCli(sandbox, ["rekey", "--store", url], { MCPPROXY_STORE_KEY: PHRASE });
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain("1 replica(s) use the store");
      expect(busy.stderr).toContain("Stop every replica");
      expect((await meta(url)).store_key_check).toBe(checkOf(legacy));
      await proxy.stop();
      const doctor = await runCli(
        ["doctor", "--json", "--store", url, "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        sandbox.env({ MCPPROXY_STORE_KEY: PHRASE }),
      );
      const { findings } = JSON.parse(doctor.stdout) as {
        findings: { area: string; subject: string; status: string; fix?: string }[];
      };
      expect(findings.find((finding) => finding.area === "store" && finding.subject === "key")).toMatchObject(
        {
          status: "warn",
          fix: expect.stringContaining("mcpproxy store rekey"),
        },
      );

      const rekeyed = await storeCli(sandbox, ["rekey", "--store", url], { MCPPROXY_STORE_KEY: PHRASE });
      expect(rekeyed.stderr).toBe("");
      expect(rekeyed.code).toBe(0);
      expect(rekeyed.stdout).toContain(
        "under MCPPROXY_STORE_KEY (a passphrase stretched with scrypt; it was a passphrase stretched with HKDF alone): " +
          "1 shared secret(s), 1 OAuth login(s).",
      );
      const after = await meta(url);
      const stretched = scryptKey(PHRASE, after.store_key_kdf!);
      expect(after.store_key_check).toBe(checkOf(stretched));
      // Nothing is left under the fast key; the secrets are the same ones, sealed again.
      const resealed = await loginOf(url);
      expect(() => createStoreKey(legacy).open(resealed, "oauth:secure")).toThrow();
      expect(createStoreKey(stretched).open(resealed, "oauth:secure").equals(login)).toBe(true);
      const sealedState = Buffer.from(after.request_state_key!, "base64");
      expect(createStoreKey(stretched).open(sealedState, "meta:request_state_key").equals(stateKey)).toBe(
        true,
      );

      // The same passphrase starts a replica, with nothing more to say about the key.
      const again = await replica(operator(), url, PHRASE);
      await again.stop();
      expect(again.stderr.text()).not.toContain("HKDF");
    });

    test("store rekey with MCPPROXY_STORE_NEW_KEY moves it to a random key: the passphrase no longer opens it", async () => {
      const { url, login } = await legacyStore();
      const sandbox = operator();
      const random = randomBytes(32);
      const moved = await storeCli(sandbox, ["rekey", "--store", url], {
        MCPPROXY_STORE_KEY: PHRASE,
        MCPPROXY_STORE_NEW_KEY: random.toString("hex"),
      });
      expect(moved.code).toBe(0);
      expect(moved.stdout).toContain("under MCPPROXY_STORE_NEW_KEY (a random key;");
      expect(moved.stdout).toContain(
        "Start the replicas with MCPPROXY_STORE_KEY set to what MCPPROXY_STORE_NEW_KEY was.",
      );
      expect((await meta(url)).store_key_check).toBe(checkOf(random));
      expect(
        createStoreKey(random)
          .open(await loginOf(url), "oauth:secure")
          .equals(login),
      ).toBe(true);
      const old = await storeCli(sandbox, ["init", "--store", url], { MCPPROXY_STORE_KEY: PHRASE });
      expect(old.code).toBe(2);
      expect(old.stderr).toContain("is not the key the shared store was set up with");
      const proxy = await replica(operator(), url, random.toString("hex"));
      await proxy.stop();
      // With the wrong current key nothing is sealed again.
      const refused = await storeCli(sandbox, ["rekey", "--store", url], {
        MCPPROXY_STORE_KEY: PHRASE,
        MCPPROXY_STORE_NEW_KEY: randomBytes(32).toString("hex"),
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("is not the key the shared store was set up with");
      expect((await meta(url)).store_key_check).toBe(checkOf(random));
    });
  },
);
