import { describe, expect, test } from "bun:test";
import { problemsOf } from "./config-test-support.ts";
import { parseConfig, type SettingOverrides } from "./load-config.ts";
import { LLM_DEFAULTS } from "./search-config.ts";

const parse = (mcpproxy: unknown, env: Record<string, string> = {}, overrides: SettingOverrides = {}) =>
  parseConfig(
    { mcpServers: {}, mcpproxy },
    { configPath: "/cfg.json", env: { HOME: "/home/u", ...env }, overrides },
  );

const llm = { baseUrl: "http://127.0.0.1:9/v1", model: "small" };

describe("mcpproxy.search", () => {
  test("auto with the built-in encoder by default; an embedder named alone keeps its mode of before", () => {
    expect(parse({}).search).toEqual({ mode: "auto" });
    expect(parse({}).embedder).toBe("use");
    expect(parse({ embedder: "HF" }).search.mode).toBe("hybrid");
    expect(parse({}, { MCPPROXY_EMBEDDER: "USE" }).search.mode).toBe("hybrid");
    expect(parse({ embedder: "bm25" }).search.mode).toBe("lexical");
    expect(parse({}, { MCPPROXY_EMBEDDER: "BM25" }).embedder).toBe("bm25");
  });

  test("lexical named is BM25 alone; auto takes a named vector embedder", () => {
    expect(parse({ search: { mode: "lexical" } })).toMatchObject({
      search: { mode: "lexical" },
      embedder: "bm25",
    });
    expect(parse({}, { MCPPROXY_SEARCH_MODE: "lexical" }).embedder).toBe("bm25");
    expect(parse({ search: { mode: "auto" }, embedder: "hf" })).toMatchObject({
      search: { mode: "auto" },
      embedder: "hf",
    });
    const [auto] = problemsOf(() => parse({ search: { mode: "auto" }, embedder: "bm25" }));
    expect(auto).toStartWith('mcpproxy.search.mode: "auto" needs vectors, but the embedder is set to BM25');
  });

  test("hybrid without a named embedder uses the built-in USE encoder; with one, that one", () => {
    expect(parse({ search: { mode: "hybrid" } }).embedder).toBe("use");
    expect(parse({}, { MCPPROXY_SEARCH_MODE: "HYBRID" }).embedder).toBe("use");
    expect(parse({ search: { mode: "hybrid" }, embedder: "openai" }).embedder).toBe("openai");
  });

  test("a mode that contradicts the embedder is an error naming both, wherever each was set", () => {
    expect(problemsOf(() => parse({ search: { mode: "lexical" }, embedder: "USE" }))).toEqual([
      'mcpproxy.search.mode: "lexical" is BM25 alone, but the embedder is USE (vectors): set the mode to "hybrid", or the embedder to BM25',
    ]);
    const [hybrid] = problemsOf(() => parse({ embedder: "bm25" }, { MCPPROXY_SEARCH_MODE: "hybrid" }));
    expect(hybrid).toStartWith(
      'MCPPROXY_SEARCH_MODE: "hybrid" needs vectors, but the embedder is set to BM25',
    );
    const [flag] = problemsOf(() =>
      parse({}, { MCPPROXY_EMBEDDER: "HF" }, { searchMode: { value: "lexical", flag: "--mode" } }),
    );
    expect(flag).toStartWith('--mode: "lexical" is BM25 alone, but the embedder is HF');
  });

  test("llm mode over either search, with the defaults filled in", () => {
    const config = parse({ search: { mode: "llm", llm } });
    expect(config.search).toEqual({ mode: "llm", llm: { ...LLM_DEFAULTS, ...llm } });
    expect(config.embedder).toBe("bm25");
    expect(parse({ search: { mode: "llm", llm }, embedder: "use" }).embedder).toBe("use");
  });

  test("every llm setting has its environment variable, and the flag wins over the file", () => {
    const config = parse(
      { search: { mode: "lexical" } },
      {
        MCPPROXY_LLM_BASE_URL: "https://llm.example/v1",
        MCPPROXY_LLM_MODEL: "m",
        MCPPROXY_LLM_API_KEY_ENV: "MY_KEY",
        MY_KEY: "sk-1",
        MCPPROXY_LLM_TIMEOUT_MS: "900",
        MCPPROXY_LLM_CANDIDATES: "8",
        MCPPROXY_LLM_CACHE_TTL_MS: "0",
      },
      { searchMode: { value: "llm", flag: "--mode" } },
    );
    expect(config.search).toEqual({
      mode: "llm",
      llm: {
        baseUrl: "https://llm.example/v1",
        model: "m",
        apiKeyEnv: "MY_KEY",
        timeoutMs: 900,
        candidates: 8,
        cacheTtlMs: 0,
      },
    });
  });

  test("llm mode needs a base URL and a model; the llm block is allowed (unused) in other modes", () => {
    expect(problemsOf(() => parse({ search: { mode: "llm" } }))).toEqual([
      "mcpproxy.search.llm.baseUrl: is needed in llm mode (or MCPPROXY_LLM_BASE_URL)",
      "mcpproxy.search.llm.model: is needed in llm mode (or MCPPROXY_LLM_MODEL)",
    ]);
    expect(parse({ search: { mode: "lexical", llm } }).search).toEqual({ mode: "lexical" });
  });

  test("the key's variable must be set in llm mode; its value is never part of the config", () => {
    const withKey = { ...llm, apiKeyEnv: "LLM_KEY" };
    expect(problemsOf(() => parse({ search: { mode: "llm", llm: withKey } }))).toEqual([
      "mcpproxy.search.llm.apiKeyEnv: names LLM_KEY, which is not set: set it in the environment mcpproxy starts in, or remove apiKeyEnv for an endpoint that needs no key",
    ]);
    const config = parse({ search: { mode: "llm", llm: withKey } }, { LLM_KEY: "sk-secret-1" });
    expect(JSON.stringify(config)).not.toContain("sk-secret-1");
    expect(parse({ search: { llm: withKey } }).search.mode).toBe("auto");
  });

  test("a key written into the file is refused without repeating it", () => {
    const problems = problemsOf(() =>
      parse({ search: { mode: "llm", llm: { ...llm, apiKey: "sk-live-2" } } }),
    );
    expect(problems).toEqual([
      "mcpproxy.search.llm.apiKey: the API key is never read from the config file: put it in an environment variable and give that variable's name as apiKeyEnv",
    ]);
    expect(problems.join("\n")).not.toContain("sk-live-2");
  });

  test("bad values and unknown keys are listed together", () => {
    const problems = problemsOf(() =>
      parse({
        search: {
          mode: "semantic",
          candidates: 5,
          llm: {
            baseUrl: "ftp://x/v1",
            model: "",
            timeoutMs: 5,
            candidates: 500,
            cacheTtlMs: -1,
            apiKeyEnv: "A-B",
          },
        },
      }),
    );
    expect(problems).toEqual([
      "mcpproxy.search.candidates: unknown key (known: mode, llm)",
      'mcpproxy.search.mode: must be "auto", "lexical", "hybrid" or "llm"',
      "mcpproxy.search.llm.baseUrl: must be an http:// or https:// URL",
      "mcpproxy.search.llm.model: must not be empty",
      "mcpproxy.search.llm.apiKeyEnv: must be the name of an environment variable (letters, digits, _)",
      "mcpproxy.search.llm.timeoutMs: must be a whole number from 100 to 120000",
      "mcpproxy.search.llm.candidates: must be a whole number from 2 to 50",
      "mcpproxy.search.llm.cacheTtlMs: must be a whole number from 0 to 86400000",
    ]);
    expect(problemsOf(() => parse({ search: { llm: { modle: "x" } } }))).toEqual([
      "mcpproxy.search.llm.modle: unknown key (did you mean `model`?)",
    ]);
    expect(problemsOf(() => parse({ search: "llm" }))).toEqual([
      "mcpproxy.search: must be an object of settings",
    ]);
    expect(problemsOf(() => parse({}, { MCPPROXY_SEARCH_MODE: "fast" }))).toEqual([
      'MCPPROXY_SEARCH_MODE: must be "auto", "lexical", "hybrid" or "llm"',
    ]);
  });
});
