import { describe, expect, test } from "bun:test";
import type { RetrieveToolsResult } from "../../index/retrieve-tools.ts";
import { answerOf, hasHits, listsOf, registrationOrder } from "./search-answer.ts";

const hit = (name: string, score: number) => ({
  name,
  server: "s",
  tool: name,
  description: "",
  inputSchema: { type: "object" },
  score,
});
const list = (query: string, ...tools: ReturnType<typeof hit>[]): RetrieveToolsResult => ({ query, tools });

describe("retrieve_tools answer", () => {
  test("one request answers with its list at the top level, the call's notes first", () => {
    const only = { ...list("echo", hit("a", 0.9)), notes: ["the query was cut"] };
    expect(answerOf([only], false, ["top_k clamped"])).toEqual({
      query: "echo",
      tools: [hit("a", 0.9)],
      notes: ["top_k clamped", "the query was cut"],
    });
    expect(answerOf([list("echo")], false, [])).toEqual({ query: "echo", tools: [] });
  });

  test("several requests answer with one list each, in order, and the call's notes beside them", () => {
    const lists = [list("first", hit("a", 0.9)), list("second")];
    const answer = answerOf(lists, true, ["top_k clamped"]);
    expect(answer).toEqual({ results: lists, notes: ["top_k clamped"] });
    expect(listsOf(answer)).toBe(lists);
    expect(hasHits(answer)).toBe(true);
    expect(hasHits(answerOf([list("x"), list("y")], true, []))).toBe(false);
    // A batch of one is still a batch: the shape follows what was asked, not how many.
    expect(answerOf([list("only")], true, [])).toEqual({ results: [list("only")] });
  });

  test("a batch registers rank by rank across its lists, each tool once with its best score", () => {
    const answer = answerOf(
      [
        list("strong", hit("a1", 0.9), hit("a2", 0.88), hit("a3", 0.87)),
        list("weak", hit("b1", 0.2), hit("b2", 0.1)),
        list("overlap", hit("a2", 0.95), hit("c2", 0.5)),
      ],
      true,
      [],
    );
    const order = registrationOrder(answer, 4);
    // Every list's best before any list's second: the weak request keeps its tool.
    expect(order.map((tool) => tool.name)).toEqual(["a1", "b1", "a2", "b2"]);
    expect(order.find((tool) => tool.name === "a2")?.score).toBe(0.95);
    expect(registrationOrder(answer, 100).map((tool) => tool.name)).toEqual([
      "a1",
      "b1",
      "a2",
      "b2",
      "c2",
      "a3",
    ]);
  });

  test("one request registers its list in order, up to the limit", () => {
    const answer = answerOf([list("q", hit("a", 0.9), hit("b", 0.8), hit("c", 0.7))], false, []);
    expect(registrationOrder(answer, 2).map((tool) => tool.name)).toEqual(["a", "b"]);
  });
});
