import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT, watchOutput } from "./helpers.ts";
import { stopAfterTest } from "./test-scope.ts";

/**
 * The offline model assets some tests and benchmarks use (a word-level static table, a tiny ONNX
 * BERT, model2vec fixtures). They are too large for the repository; MCPPROXY_TEST_MODELS names
 * the folder that holds them, one subfolder per model (README, Development). Where it is unset
 * or lacks a model, the tests that need it are skipped and say why.
 */
export const TEST_MODELS_ENV = "MCPPROXY_TEST_MODELS";

/** The model's folder, when MCPPROXY_TEST_MODELS is set and holds it. */
export function modelDir(name: string): string | undefined {
  const root = process.env[TEST_MODELS_ENV];
  const dir = root ? join(root, name) : undefined;
  return dir && existsSync(dir) ? dir : undefined;
}

/** modelDir, and a line on stderr saying which tests are skipped and why when it is not there. */
export function testModel(name: string): string | undefined {
  const dir = modelDir(name);
  if (dir) return dir;
  const root = process.env[TEST_MODELS_ENV];
  process.stderr.write(
    root
      ? `skipping tests that need the ${name} model: ${join(root, name)} does not exist\n`
      : `skipping tests that need the ${name} model: set ${TEST_MODELS_ENV} to the folder of the offline test models\n`,
  );
  return undefined;
}

/** Spawns tests/fixtures/embeddings-server.ts (an OpenAI-compatible /v1/embeddings on 127.0.0.1). */
export async function startEmbeddingsServer(env: Record<string, string> = {}) {
  const child = Bun.spawn([process.execPath, join(ROOT, "tests", "fixtures", "embeddings-server.ts")], {
    stdout: "pipe",
    env: { ...process.env, ...env },
  });
  const stop = stopAfterTest(() => child.kill());
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/v1`,
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { requests: number; inputs: number },
    /** With FIXTURE_HOLD: lets the held batches through. */
    release: async () => void (await fetch(`${base}/release`, { method: "POST" })),
    stop,
  };
}
