import { afterEach, describe, expect, test } from "bun:test";
import { startEmbeddingsServer } from "../../../tests/model-assets.ts";
import { createOpenAiEmbedder } from "./openai-embedder.ts";

const servers: { stop(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
});
async function server(env: Record<string, string> = {}) {
  const started = await startEmbeddingsServer(env);
  servers.push(started);
  return started;
}

describe("OpenAI-compatible embeddings", () => {
  test("sends texts in batches and returns unit vectors in order", async () => {
    const fixture = await server({ FIXTURE_API_KEY: "sk-test-123" });
    const embedder = await createOpenAiEmbedder(
      { baseUrl: fixture.url, model: "m", apiKey: "sk-test-123", batchSize: 4 },
      "openai-test",
    );
    const texts = Array.from({ length: 10 }, (_, i) => `text number ${i}`);
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(10);
    for (const vector of vectors) expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    const [again] = await embedder.embed([texts[3]!]);
    expect([...again!]).toEqual([...vectors[3]!]);
    // One probe for the dimensions, three batches of at most 4, one more single text.
    expect(await fixture.stats()).toEqual({ requests: 5, inputs: 12 });
  });

  test("retries server errors and then succeeds", async () => {
    const fixture = await server({ FIXTURE_FAIL_FIRST: "2" });
    const embedder = await createOpenAiEmbedder({ baseUrl: fixture.url, model: "m", retries: 3 }, "t");
    expect(embedder.dimensions).toBe(64);
    expect((await fixture.stats()).requests).toBe(3);
  });

  test("a rejected key is an error that never repeats the key", async () => {
    const fixture = await server({ FIXTURE_API_KEY: "sk-right" });
    const attempt = createOpenAiEmbedder(
      { baseUrl: fixture.url, model: "m", apiKey: "sk-wrong-secret" },
      "t",
    );
    const error = (await attempt.catch((e: Error) => e)) as Error;
    expect(error.message).toContain("HTTP 401");
    expect(error.message).not.toContain("sk-wrong-secret");
  });

  test("an endpoint that does not answer in time fails after the retries", async () => {
    const silent = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Promise<Response>(() => {}),
    });
    try {
      const attempt = createOpenAiEmbedder(
        { baseUrl: `http://127.0.0.1:${silent.port}/v1`, model: "m", timeoutMs: 100, retries: 1 },
        "t",
      );
      expect(((await attempt.catch((e: Error) => e)) as Error).message).toMatch(
        /failed after 2 attempts: no answer within 100 ms/,
      );
    } finally {
      silent.stop(true);
    }
  });
});
