import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
// Embedded into the compiled binary, packed (packed-file.ts); onnxruntime would otherwise fetch it from a CDN.
import ortWasmPath from "onnxruntime-web/ort-wasm-simd-threaded.wasm" with { type: "file" };
import * as ort from "onnxruntime-web/wasm";
import { batchedEmbedder, type Embedder } from "./embedder.ts";
import { readEmbeddedFile } from "./packed-file.ts";

/**
 * Sentence-embedding transformer models in ONNX form (the transformers.js layout: config.json,
 * tokenizer files and onnx/model*.onnx), mean-pooled and normalized, as sentence-transformers
 * does for models such as all-MiniLM-L6-v2. `model` is a local directory or a Hugging Face id;
 * ids are looked up in `cacheDir` first and downloaded there only when `allowDownload`.
 */
export interface OnnxEmbedderOptions {
  model: string;
  cacheDir: string;
  allowDownload: boolean;
  /** "q8" uses onnx/model_quantized.onnx, "fp32" onnx/model.onnx. */
  dtype?: "q8" | "fp32";
}

const BATCH = 32;

/**
 * The web build reads every file through `env.fetch`. Plain paths are served from disk; files
 * fetched from the Hub are written under `cacheDir/<model id>/` so the next start finds them
 * locally and works offline.
 */
function fileFetch(cacheDir: string): typeof fetch {
  const hubFile = /^https?:\/\/[^/]+\/(.+)\/resolve\/[^/]+\/(.+)$/;
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!/^https?:/.test(url)) {
      const path = url.startsWith("file:") ? new URL(url).pathname : url;
      return existsSync(path) ? new Response(Bun.file(path)) : new Response(null, { status: 404 });
    }
    const response = await fetch(url, init);
    const match = hubFile.exec(url);
    if (!response.ok || !match) return response;
    const bytes = await response.arrayBuffer();
    const target = join(cacheDir, match[1]!, decodeURIComponent(match[2]!));
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    writeFileSync(target, new Uint8Array(bytes), { mode: 0o600 });
    return new Response(bytes, { status: 200, headers: response.headers });
  }) as typeof fetch;
}

type Transformers = typeof import("@huggingface/transformers");
let transformers: Promise<Transformers> | undefined;

/**
 * transformers.js on onnxruntime's WebAssembly backend, the one that works inside the
 * `bun build --compile` binary: its Node build loads onnxruntime-node and sharp, native modules
 * the binary cannot load. Its web build takes the runtime from `globalThis[Symbol.for("onnxruntime")]`
 * when set, so the WASM runtime (with its .wasm embedded in the binary) is handed over there,
 * before the module is first evaluated. The package's export map offers the web build only to
 * browsers, hence the path.
 */
function loadTransformers(): Promise<Transformers> {
  transformers ??= (async () => {
    ort.env.wasm.wasmBinary = readEmbeddedFile(ortWasmPath);
    // Set so that transformers.js does not point the runtime at its CDN; the glue code is part
    // of this bundle and the binary is `wasmBinary`, so the path itself is never fetched.
    ort.env.wasm.wasmPaths = { wasm: ortWasmPath };
    ort.env.wasm.numThreads = 1;
    (globalThis as Record<symbol, unknown>)[Symbol.for("onnxruntime")] = ort;
    // The web build decides once, as it loads, whether it runs under Node (Bun says it is Node)
    // and would then ask for file paths that only its Node build can open.
    const release = Object.getOwnPropertyDescriptor(process, "release");
    Object.defineProperty(process, "release", { value: { name: "bun" }, configurable: true });
    try {
      return (await import(
        // @ts-expect-error the web build ships no type declarations of its own; they are the package's
        "../../../node_modules/@huggingface/transformers/dist/transformers.web.js"
      )) as Transformers;
    } finally {
      if (release) Object.defineProperty(process, "release", release);
    }
  })();
  return transformers;
}

export async function loadOnnxEmbedder(options: OnnxEmbedderOptions, id: string): Promise<Embedder> {
  const { env: transformersEnv, pipeline } = await loadTransformers();
  const isLocal = existsSync(options.model);
  transformersEnv.fetch = fileFetch(options.cacheDir);
  transformersEnv.useFS = false;
  transformersEnv.useFSCache = false;
  transformersEnv.allowLocalModels = true;
  transformersEnv.allowRemoteModels = !isLocal && options.allowDownload;
  transformersEnv.localModelPath = isLocal ? dirname(options.model) : options.cacheDir;
  transformersEnv.cacheDir = options.cacheDir;
  const modelName = isLocal ? basename(options.model) : options.model;
  const dtype =
    options.dtype ?? (existsSync(join(options.model, "onnx", "model_quantized.onnx")) ? "q8" : "fp32");
  // "auto" keeps transformers.js from insisting on its Node device list ("cpu"), which does not
  // apply to the injected WASM runtime; the session then runs on the wasm provider.
  const extractor = await pipeline("feature-extraction", modelName, {
    dtype,
    device: "auto",
    session_options: { executionProviders: ["wasm"] },
  });

  const embedBatch = async (texts: string[]) => {
    const output = await extractor(texts, { pooling: "mean", normalize: true });
    const [rows, dimensions] = output.dims as [number, number];
    const data = output.data as Float32Array;
    return Array.from({ length: rows }, (_, row) => data.slice(row * dimensions, (row + 1) * dimensions));
  };
  return batchedEmbedder(id, BATCH, embedBatch, () => extractor.dispose());
}
