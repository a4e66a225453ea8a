import * as v from "valibot";
import type { ExpansionProblem } from "./expand-env.ts";
import { unknownKeys } from "./known-keys.ts";
import { caseInsensitive, httpUrl, intInRange, nonEmptyString } from "./value-schemas.ts";

/**
 * `mcpproxy.search`: how `retrieve_tools` and `mcpproxy search` rank. `lexical` is BM25 alone,
 * `hybrid` fuses BM25 with the vectors of the configured embedder (the built-in USE encoder when
 * none is named) in every search, `auto` (the default) is BM25 and fuses only the requests whose
 * words BM25 finds too little of (src/index/catalog-search.ts), `llm` sends the best candidates of
 * that search to a chat model that re-ranks them (src/index/llm-rerank.ts). The older `embedder`
 * key says the same thing from the other side, so the two must agree: `lexical` with a vector
 * embedder, or `hybrid` or `auto` with `BM25` named, is a config error rather than one of them
 * winning in silence. With nothing set, the mode is `auto` with the built-in encoder; with only an
 * embedder named, BM25 means `lexical` and a vector embedder `hybrid`, as before `auto` existed.
 */
const SEARCH_MODES = ["auto", "lexical", "hybrid", "llm"] as const;
type SearchMode = (typeof SEARCH_MODES)[number];

/** What `llm` mode needs; the key itself stays in the environment, only its variable's name is here. */
export interface ResolvedLlmSearch {
  /** Of an OpenAI-compatible API: `${baseUrl}/chat/completions` is asked. */
  baseUrl: string;
  model: string;
  /** The environment variable that holds the API key; unset, no Authorization header is sent. */
  apiKeyEnv?: string | undefined;
  timeoutMs: number;
  /** How many of the search's best tools the model sees. */
  candidates: number;
  /** How long an answer is reused for the same request and candidates (0: never). */
  cacheTtlMs: number;
}

export interface ResolvedSearch {
  mode: SearchMode;
  /** Present in `llm` mode only. */
  llm?: ResolvedLlmSearch | undefined;
}

const envName = v.pipe(
  v.string("must be the name of an environment variable"),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be the name of an environment variable (letters, digits, _)"),
);

const chatBaseUrl = v.pipe(
  httpUrl,
  v.check((url) => /^https?:\/\//i.test(url), "must be an http:// or https:// URL"),
);

/** The `mcpproxy.search` keys: file key, environment variable, schema (as SETTINGS in settings-schema.ts). */
const SEARCH_SETTINGS = {
  mode: {
    env: "MCPPROXY_SEARCH_MODE",
    schema: caseInsensitive(SEARCH_MODES, 'must be "auto", "lexical", "hybrid" or "llm"'),
  },
} as const;

/** The `mcpproxy.search.llm` keys. */
const LLM_SETTINGS = {
  baseUrl: { env: "MCPPROXY_LLM_BASE_URL", schema: chatBaseUrl },
  model: { env: "MCPPROXY_LLM_MODEL", schema: nonEmptyString },
  apiKeyEnv: { env: "MCPPROXY_LLM_API_KEY_ENV", schema: envName },
  timeoutMs: { env: "MCPPROXY_LLM_TIMEOUT_MS", schema: intInRange(100, 120_000) },
  candidates: { env: "MCPPROXY_LLM_CANDIDATES", schema: intInRange(2, 50) },
  cacheTtlMs: { env: "MCPPROXY_LLM_CACHE_TTL_MS", schema: intInRange(0, 24 * 3_600_000) },
} as const;

/**
 * The defaults and why (docs/search.md, "Search modes"): 4 s lets a hosted small model read 20 short
 * candidates and name a few, and caps what a stuck endpoint adds to a search; 20 candidates hold
 * 97.8% of the tools the eval's requests need (lexical recall@20; 97.0% at 10, 98.8% at 50) in a
 * prompt of about 1.6k tokens (bench/llm-rerank-bench.ts); 5 minutes covers an agent asking the
 * same thing again within a task.
 */
export const LLM_DEFAULTS = { timeoutMs: 4_000, candidates: 20, cacheTtlMs: 300_000 } as const;

/** Resolves one table of settings: flag > environment > file > what `into` already holds. */
export type ResolveTable = (
  table: Readonly<Record<string, { env: string; schema: v.GenericSchema }>>,
  section: Readonly<Record<string, unknown>>,
  path: string,
  flags: Readonly<Record<string, { value: unknown; flag: string } | undefined>>,
  into: Record<string, unknown>,
) => void;

export interface SearchInput {
  /** `mcpproxy.search` as written (unexpanded: `resolve` expands it). */
  raw: unknown;
  env: Readonly<Record<string, string | undefined>>;
  /** The embedder after file, environment and flags. */
  embedder: string;
  /** Whether the person named an embedder (file or environment), or it is the default. */
  isEmbedderNamed: boolean;
  /** `--mode` of `search` and `eval`. */
  modeFlag?: { value: unknown; flag: string } | undefined;
  resolve: ResolveTable;
}

/** The search settings, and the embedder they imply; every problem is pushed, none thrown. */
export function resolveSearch(
  input: SearchInput,
  problems: ExpansionProblem[],
): { search: ResolvedSearch; embedder: string } {
  const section = objectAt(input.raw, "mcpproxy.search", problems);
  problems.push(...unknownKeys(section, [...Object.keys(SEARCH_SETTINGS), "llm"], "mcpproxy.search"));
  const chosen: Record<string, unknown> = {};
  input.resolve(SEARCH_SETTINGS, section, "mcpproxy.search", { mode: input.modeFlag }, chosen);
  const isVector = input.embedder !== "bm25";
  const mode =
    (chosen.mode as SearchMode | undefined) ??
    (isVector ? "hybrid" : input.isEmbedderNamed ? "lexical" : "auto");
  let embedder = input.embedder;
  const where = modeSource(input);
  if (mode === "lexical" && isVector) {
    problems.push({
      ...where,
      message:
        `"lexical" is BM25 alone, but the embedder is ${input.embedder.toUpperCase()} (vectors): ` +
        'set the mode to "hybrid", or the embedder to BM25',
    });
  } else if ((mode === "hybrid" || mode === "auto") && !isVector) {
    if (input.isEmbedderNamed)
      problems.push({
        ...where,
        message:
          `"${mode}" needs vectors, but the embedder is set to BM25: set the embedder to USE, HF or OPENAI, ` +
          `or leave it out (${mode} then uses the built-in USE encoder), or set the mode to "lexical"`,
      });
    else embedder = "use";
  }
  const llmRaw = objectAt(section.llm, "mcpproxy.search.llm", problems);
  problems.push(...llmKeyProblems(llmRaw));
  const llm: Record<string, unknown> = { ...LLM_DEFAULTS };
  input.resolve(LLM_SETTINGS, llmRaw, "mcpproxy.search.llm", {}, llm);
  if (mode !== "llm") return { search: { mode }, embedder };
  for (const key of ["baseUrl", "model"] as const) {
    if (llm[key] === undefined)
      problems.push({
        path: `mcpproxy.search.llm.${key}`,
        message: `is needed in llm mode (or ${LLM_SETTINGS[key].env})`,
      });
  }
  const keyVariable = llm.apiKeyEnv as string | undefined;
  if (keyVariable !== undefined && !input.env[keyVariable]) {
    problems.push({
      path: "mcpproxy.search.llm.apiKeyEnv",
      message: `names ${keyVariable}, which is not set: set it in the environment mcpproxy starts in, or remove apiKeyEnv for an endpoint that needs no key`,
    });
  }
  return { search: { mode, llm: llm as unknown as ResolvedLlmSearch }, embedder };
}

/** Where the mode came from, to blame the right place for a conflict. */
function modeSource(input: SearchInput): Pick<ExpansionProblem, "path" | "source"> {
  if (input.modeFlag) return { path: input.modeFlag.flag, source: "flag" };
  const variable = SEARCH_SETTINGS.mode.env;
  if (input.env[variable]) return { path: variable, source: "env" };
  return { path: "mcpproxy.search.mode", source: "file" };
}

function objectAt(raw: unknown, path: string, problems: ExpansionProblem[]): Record<string, unknown> {
  if (raw === undefined) return {};
  if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) return raw as Record<string, unknown>;
  problems.push({ path, message: "must be an object of settings" });
  return {};
}

/** A key written into the file is the one mistake worth its own message: it would sit there in clear. */
function llmKeyProblems(section: Readonly<Record<string, unknown>>): ExpansionProblem[] {
  return unknownKeys(section, Object.keys(LLM_SETTINGS), "mcpproxy.search.llm").map((problem) =>
    /(^|\.)api_?key$/i.test(problem.path)
      ? {
          path: problem.path,
          message:
            "the API key is never read from the config file: put it in an environment variable and give that variable's name as apiKeyEnv",
        }
      : problem,
  );
}
