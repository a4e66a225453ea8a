// mcpproxy runs ONNX models on onnxruntime-web (see src/index/embedders/onnx-embedder.ts).
throw new Error("onnxruntime-node is not installed with mcpproxy: its ONNX embedder uses onnxruntime-web");
