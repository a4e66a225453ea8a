/** `import path from "x.wasm" with { type: "file" }`: Bun embeds the file in the compiled binary and gives its path. */
declare module "*.wasm" {
  const path: string;
  export default path;
}
