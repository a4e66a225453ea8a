import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { MODELS_DIR } from "../../config/paths.ts";
import { describeError, ProxyError } from "../../errors.ts";
import type { Embedder } from "./embedder.ts";
import type { OnnxEmbedderOptions } from "./onnx-embedder.ts";
import { USE_LITE_DIMENSIONS, USE_LITE_ID } from "./use-lite-id.ts";

/** The settings that pick and configure the embedder (MCPPROXY_EMBEDDER and friends). */
export interface EmbedderSettings {
  embedder: "bm25" | "use" | "hf" | "openai";
  hfModel: string;
  openaiBaseUrl: string;
  openaiModel: string;
  dataDir: string;
}

/** Loaded on demand: onnxruntime and transformers.js are megabytes of code that BM25 users never need. */
async function loadOnnxEmbedder(options: OnnxEmbedderOptions, id: string): Promise<Embedder> {
  return (await import("./onnx-embedder.ts")).loadOnnxEmbedder(options, id);
}

// Each embedder's module, and its library (the HF tokenizers, onnxruntime, tfjs), is imported when
// that embedder is asked for: BM25, the default, imports none of them.
const isStaticModelDir = (dir: string) =>
  existsSync(join(dir, "model.safetensors")) && existsSync(join(dir, "config.json"));
const isOnnxModelDir = (dir: string) => existsSync(join(dir, "config.json")) && existsSync(join(dir, "onnx"));

const unavailable = (message: string, cause?: unknown) =>
  new ProxyError("EMBEDDER_UNAVAILABLE", message, cause === undefined ? {} : { cause });

/**
 * The embedder the settings ask for, or undefined for BM25. Never falls back silently: a model
 * that cannot be loaded is an EMBEDDER_UNAVAILABLE error (exit 2) that says what to do.
 */
export async function createEmbedder(
  settings: EmbedderSettings,
  env: Readonly<Record<string, string | undefined>> = process.env,
  /** The built-in encoder loaded at its first use, not now (`auto` search); the others load now. */
  isLazy = false,
): Promise<Embedder | undefined> {
  if (settings.embedder === "bm25") return undefined;
  if (settings.embedder === "openai") return openAi(settings, env.OPENAI_API_KEY);
  if (settings.embedder === "use")
    return isLazy ? lazyEmbedder(USE_LITE_ID, USE_LITE_DIMENSIONS, useLite, useLiteKnows) : useLite();
  return huggingFace(settings);
}

/**
 * An embedder whose model is loaded at its first `embed`, not before: `auto` search opens the
 * catalog with its id and width, and most requests never need it. A load that fails fails that
 * call, and the next call tries again.
 */
export function lazyEmbedder(
  id: string,
  dimensions: number,
  load: () => Promise<Embedder>,
  knows?: (text: string) => Promise<boolean>,
): Embedder {
  let loading: Promise<Embedder> | undefined;
  const loaded = () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  return {
    id,
    dimensions,
    embed: async (texts, onProgress) => (await loaded()).embed(texts, onProgress),
    ...(knows ? { knows } : {}),
    async close() {
      const model = loading ? await loading.catch(() => undefined) : undefined;
      await model?.close?.();
    },
  };
}

/** Whether the built-in encoder has words for a text; its vocabulary is read when first asked. */
async function useLiteKnows(text: string): Promise<boolean> {
  return (await import("./use-lite-words.ts")).useLiteKnows(text);
}

/** Loaded on demand, like the ONNX path: tfjs and the encoder's 26 MB of weights are read only when asked for. */
async function useLite(): Promise<Embedder> {
  try {
    return await (await import("./use-lite-embedder.ts")).loadUseLiteEmbedder();
  } catch (error) {
    throw unavailable(
      `The built-in sentence encoder cannot be loaded (${describeError(error)}). Set MCPPROXY_EMBEDDER=BM25.`,
      error,
    );
  }
}

async function openAi(settings: EmbedderSettings, apiKey: string | undefined): Promise<Embedder> {
  const id = `openai:${settings.openaiBaseUrl.replace(/\/+$/, "")}#${settings.openaiModel}`;
  try {
    const { createOpenAiEmbedder } = await import("./openai-embedder.ts");
    return await createOpenAiEmbedder(
      { baseUrl: settings.openaiBaseUrl, model: settings.openaiModel, apiKey: apiKey || undefined },
      id,
    );
  } catch (error) {
    throw unavailable(
      `The OpenAI-compatible embeddings endpoint cannot be used (${describeError(error)}). ` +
        "Check MCPPROXY_OPENAI_BASE_URL, MCPPROXY_OPENAI_MODEL and OPENAI_API_KEY, or set MCPPROXY_EMBEDDER=BM25.",
    );
  }
}

async function huggingFace(settings: EmbedderSettings): Promise<Embedder> {
  const cacheDir = join(settings.dataDir, MODELS_DIR);
  const asPath = resolve(settings.hfModel);
  const isDirectory = existsSync(asPath) && statSync(asPath).isDirectory();
  const cached = join(cacheDir, settings.hfModel);
  const dir = isDirectory ? asPath : existsSync(cached) ? cached : undefined;
  const id = `hf:${settings.hfModel}`;
  const advice =
    "Set MCPPROXY_HF_MODEL to a local model directory (a model2vec/static model with model.safetensors, " +
    "or a transformers.js model with onnx/model*.onnx), or set MCPPROXY_EMBEDDER=BM25.";
  try {
    if (dir && isStaticModelDir(dir))
      return (await import("./static-embedder.ts")).loadStaticEmbedder(dir, id);
    if (dir && isOnnxModelDir(dir))
      return await loadOnnxEmbedder({ model: dir, cacheDir, allowDownload: false }, id);
    if (isDirectory)
      throw new Error(`${asPath} holds neither model.safetensors with config.json nor an onnx/ folder`);
    if (!/^[\w.-]+\/[\w.-]+$/.test(settings.hfModel)) throw new Error(`no directory ${asPath}`);
    // A Hugging Face id not downloaded yet: transformers.js fetches it into the data dir once.
    return await loadOnnxEmbedder({ model: settings.hfModel, cacheDir, allowDownload: true }, id);
  } catch (error) {
    if (error instanceof ProxyError) throw error;
    throw unavailable(
      `The HF embedding model ${settings.hfModel} cannot be loaded: ${describeError(error)}. ${advice}`,
      error,
    );
  }
}
