import type { ChatMessage } from "./rerank-prompt.ts";

/**
 * One request to an OpenAI-compatible `/chat/completions` endpoint, bounded in time (one deadline
 * for the connection, the headers and the body) and in size (the body is read up to `maxBytes`,
 * then dropped). The key goes only in the Authorization header; a failure is told by its kind and
 * status, never with the endpoint's body or the key, since an error page may echo either.
 */
export interface ChatRequest {
  /** The API's base, such as `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  messages: readonly ChatMessage[];
  timeoutMs: number;
  maxBytes: number;
}

interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatAnswer {
  content: string;
  usage?: TokenUsage | undefined;
}

export type ChatFailureKind =
  | "timeout"
  | "refused"
  | "network"
  | "http"
  | "too-large"
  | "not-json"
  | "no-content";

export class ChatFailure extends Error {
  override readonly name = "ChatFailure";
  constructor(
    readonly kind: ChatFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/** Bounds a count the endpoint reports: it is shown and summed, and a server can send anything. */
const MAX_TOKENS_COUNTED = 10_000_000;

export async function requestChatCompletion(request: ChatRequest): Promise<ChatAnswer> {
  const signal = AbortSignal.timeout(request.timeoutMs);
  const timedOut = () => new ChatFailure("timeout", `no answer within ${request.timeoutMs} ms`);
  let response: Response;
  try {
    response = await fetch(`${request.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {}),
      },
      // Only what every compatible server takes: `temperature` and `max_tokens` are refused by some
      // reasoning models, and the prompt already asks for a short JSON answer.
      body: JSON.stringify({ model: request.model, messages: request.messages, stream: false }),
      signal,
      redirect: "error",
    });
  } catch (error) {
    if (signal.aborted) throw timedOut();
    const code = (error as { code?: unknown }).code;
    if (code === "ConnectionRefused" || code === "ECONNREFUSED")
      throw new ChatFailure("refused", "the connection was refused");
    throw new ChatFailure(
      "network",
      `the request failed (${typeof code === "string" ? code : "network error"})`,
    );
  }
  if (!response.ok) {
    void response.body?.cancel().catch(() => undefined);
    throw new ChatFailure("http", `HTTP ${response.status}`);
  }
  const text = await readBounded(response, request.maxBytes, signal, timedOut).catch((error: unknown) => {
    if (error instanceof ChatFailure) throw error;
    throw signal.aborted ? timedOut() : new ChatFailure("network", "the answer was cut off");
  });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ChatFailure("not-json", "the answer is not JSON");
  }
  const content = contentOf(body);
  if (content === undefined)
    throw new ChatFailure("no-content", "the answer has no choices[0].message.content");
  return { content, usage: usageOf(body) };
}

async function readBounded(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
  timedOut: () => ChatFailure,
): Promise<string> {
  const tooLarge = () => new ChatFailure("too-large", `the answer is larger than ${maxBytes} bytes`);
  if (Number(response.headers.get("content-length") ?? 0) > maxBytes) {
    void response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const aborted = new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(timedOut()), { once: true });
  });
  aborted.catch(() => undefined);
  const chunks: Uint8Array[] = [];
  let size = 0;
  let isRead = false;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), aborted]);
      if (next.done) break;
      size += next.value.length;
      if (size > maxBytes) throw tooLarge();
      chunks.push(next.value);
    }
    isRead = true;
  } finally {
    if (!isRead) void reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function contentOf(body: unknown): string | undefined {
  const choices = isRecord(body) ? body.choices : undefined;
  const first = Array.isArray(choices) ? choices[0] : undefined;
  const message = isRecord(first) ? first.message : undefined;
  const content = isRecord(message) ? message.content : undefined;
  return typeof content === "string" ? content : undefined;
}

function usageOf(body: unknown): TokenUsage | undefined {
  const usage = isRecord(body) ? body.usage : undefined;
  if (!isRecord(usage)) return undefined;
  return { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens) };
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0
    ? Math.min(Math.round(value), MAX_TOKENS_COUNTED)
    : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
