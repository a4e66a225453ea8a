import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT, watchOutput } from "./helpers.ts";

/**
 * The offline model assets in ../shared/models (never copied into the repo). Tests that need one
 * run only where it exists and otherwise say why they were skipped.
 */
export const SHARED_MODELS = join(ROOT, "..", "shared", "models");

export function sharedModel(name: string): string | undefined {
  const dir = join(SHARED_MODELS, name);
  if (existsSync(dir)) return dir;
  process.stderr.write(`skipping tests that need ${dir}: the shared model assets are not on this machine\n`);
  return undefined;
}

/** Spawns tests/fixtures/embeddings-server.ts (an OpenAI-compatible /v1/embeddings on 127.0.0.1). */
export async function startEmbeddingsServer(env: Record<string, string> = {}) {
  const child = Bun.spawn([process.execPath, join(ROOT, "tests", "fixtures", "embeddings-server.ts")], {
    stdout: "pipe",
    env: { ...process.env, ...env },
  });
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/v1`,
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { requests: number; inputs: number },
    /** With FIXTURE_HOLD: lets the held batches through. */
    release: async () => void (await fetch(`${base}/release`, { method: "POST" })),
    stop: () => child.kill(),
  };
}
