import type { Embedder } from "./embedder.ts";
import { l2Normalize } from "./embedder.ts";

/**
 * Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Azure-style gateways, Ollama, vLLM,
 * LM Studio…). Texts go in batches; 429 and 5xx answers and network errors are retried with
 * backoff; each request has a timeout. The API key is sent only in the Authorization header and
 * never appears in an error message or a log line.
 */
export interface OpenAiEmbedderOptions {
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  batchSize?: number;
  timeoutMs?: number;
  retries?: number;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: number[] }[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function createOpenAiEmbedder(options: OpenAiEmbedderOptions, id: string): Promise<Embedder> {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/embeddings`;
  const batchSize = options.batchSize ?? 96;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retries = options.retries ?? 3;
  const redact = (text: string) => (options.apiKey ? text.split(options.apiKey).join("[redacted]") : text);

  const request = async (input: string[]): Promise<Float32Array[]> => {
    let lastError = "";
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(Math.min(8_000, 250 * 2 ** attempt));
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({ model: options.model, input }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        lastError =
          (error as Error).name === "TimeoutError"
            ? `no answer within ${timeoutMs} ms`
            : (error as Error).message;
        continue;
      }
      if (response.status === 429 || response.status >= 500) {
        lastError = `HTTP ${response.status}`;
        continue;
      }
      const body = await response.text();
      if (!response.ok) {
        throw new Error(redact(`${url} answered HTTP ${response.status}: ${body.slice(0, 300)}`));
      }
      const parsed = JSON.parse(body) as EmbeddingsResponse;
      const rows = parsed.data ?? [];
      if (rows.length !== input.length) {
        throw new Error(`${url} returned ${rows.length} embeddings for ${input.length} texts`);
      }
      const ordered = [...rows].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      return ordered.map((row) => l2Normalize(Float32Array.from(row.embedding ?? [])));
    }
    throw new Error(redact(`${url} failed after ${retries + 1} attempts: ${lastError}`));
  };

  const [probe] = await request(["dimensions"]);
  const dimensions = probe!.length;
  if (dimensions === 0) throw new Error(`${url} returned an empty embedding for model ${options.model}`);

  return {
    id,
    dimensions,
    async embed(texts, onProgress) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = await request(texts.slice(start, start + batchSize));
        for (const vector of batch) {
          if (vector.length !== dimensions) {
            throw new Error(`${url} returned ${vector.length} dimensions, expected ${dimensions}`);
          }
          vectors.push(vector);
        }
        onProgress?.(vectors.length);
      }
      return vectors;
    },
  };
}
