import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { type Embedder, l2Normalize } from "./embedder.ts";
import { loadSafetensors } from "./safetensors.ts";

/**
 * Static embedding models: a table of one vector per token, averaged over the tokens of a text.
 * No neural network runs, so a text costs microseconds. Two layouts:
 *  - model2vec (`config.json` with model_type "model2vec", `model.safetensors`, `tokenizer.json`),
 *    encoded exactly as Python model2vec's StaticModel.encode: tokenize without special tokens,
 *    drop the unknown token, keep 512 ids, average `embeddings[mapping[id] ?? id] · (weights[id] ?? 1)`,
 *    then L2-normalize when `config.normalize` (default true);
 *  - word-level tables (model_type "word-static", `model.safetensors`, `vocab.txt` with one word
 *    per row): words split like tool names, unknown words skipped, rows summed, normalized.
 */
const MAX_TOKENS = 512;

interface StaticConfig {
  model_type?: string;
  normalize?: boolean;
}

export function loadStaticEmbedder(dir: string, id: string): Embedder {
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as StaticConfig;
  const tensors = loadSafetensors(join(dir, "model.safetensors"));
  const table = tensors.get("embeddings");
  if (table?.shape.length !== 2) throw new Error(`${dir}/model.safetensors has no 2-D "embeddings" tensor`);
  const [rows, dimensions] = table.shape as [number, number];
  const weights = tensors.get("weights")?.data;
  const mapping = tensors.get("mapping")?.data;
  const normalize = config.normalize ?? true;
  const toIds = config.model_type === "word-static" ? wordIds(dir) : tokenizerIds(dir);

  const encode = (text: string): Float32Array => {
    const out = new Float32Array(dimensions);
    const ids = toIds(text).slice(0, MAX_TOKENS);
    for (const id of ids) {
      const row = mapping ? mapping[id]! : id;
      if (row === undefined || row < 0 || row >= rows) continue;
      const weight = weights ? weights[id]! : 1;
      const base = row * dimensions;
      for (let d = 0; d < dimensions; d++) out[d]! += table.data[base + d]! * weight;
    }
    const count = Math.max(1, ids.length);
    for (let d = 0; d < dimensions; d++) out[d]! /= count;
    return normalize ? l2Normalize(out) : out;
  };

  return {
    id,
    dimensions,
    async embed(texts, onProgress) {
      const vectors: Float32Array[] = [];
      for (const text of texts) {
        vectors.push(encode(text));
        if (onProgress && vectors.length % 256 === 0) onProgress(vectors.length);
      }
      onProgress?.(vectors.length);
      return vectors;
    },
  };
}

/** model2vec: the model's own tokenizer, without special tokens and without the unknown token. */
function tokenizerIds(dir: string): (text: string) => number[] {
  const tokenizerPath = join(dir, "tokenizer.json");
  if (!existsSync(tokenizerPath)) throw new Error(`${dir} has no tokenizer.json`);
  const json = JSON.parse(readFileSync(tokenizerPath, "utf8")) as {
    model?: { unk_token?: string; vocab?: unknown };
  };
  const configPath = join(dir, "tokenizer_config.json");
  const tokenizerConfig = existsSync(configPath) ? JSON.parse(readFileSync(configPath, "utf8")) : {};
  const tokenizer = new Tokenizer(json as never, tokenizerConfig);
  const unkToken = json.model?.unk_token;
  const unkId = unkToken === undefined ? undefined : tokenizer.token_to_id(unkToken);
  return (text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
    return unkId === undefined ? ids : ids.filter((id) => id !== unkId);
  };
}

/** Word tables: camelCase-aware lowercase words looked up in vocab.txt; unknown words are skipped. */
function wordIds(dir: string): (text: string) => number[] {
  const rows = new Map<string, number>();
  readFileSync(join(dir, "vocab.txt"), "utf8")
    .split("\n")
    .forEach((word, row) => {
      if (word) rows.set(word, row);
    });
  return (text) => {
    const ids: number[] = [];
    for (const word of tableWords(text)) {
      const row = rows.get(word);
      if (row !== undefined) ids.push(row);
    }
    return ids;
  };
}

/** A text's words as a word table looks them up: split on camelCase, lowercased, letters and digits. */
export function tableWords(text: string): string[] {
  return (
    text
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase()
      .match(/[a-z0-9]+/g) ?? []
  );
}
