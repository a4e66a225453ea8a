import { describe, expect, test } from "bun:test";
import { interleaveSteps, namesSeveralSteps, requestSteps, WHOLE_REQUEST_HEAD } from "./request-steps.ts";

const hits = (...ids: string[]) => ids.map((id, i) => ({ id, score: 0.9 - i * 0.1 }));

describe("request steps", () => {
  test("a request splits at sentences and step words, and fragments too small to search are dropped", () => {
    expect(
      requestSteps("Create an index named products, then check the server health. Finally list the keys."),
    ).toEqual(["Create an index named products,", "check the server health.", "list the keys."]);
    expect(requestSteps("Send the weekly report then")).toEqual([]);
    expect(requestSteps("Get the weather for Paris")).toEqual([]);
    expect(namesSeveralSteps("Get the weather for Paris")).toBe(false);
    expect(namesSeveralSteps("Get the weather. Then book a flight")).toBe(true);
  });

  test("the whole request's best come first, then each step's in turn, without repeats", () => {
    const merged = interleaveSteps(hits("w1", "w2", "w3", "s1"), [hits("s1", "x"), hits("w1", "t1")], 10);
    expect(WHOLE_REQUEST_HEAD).toBe(2);
    expect(merged.map((hit) => hit.id)).toEqual(["w1", "w2", "s1", "w3", "x", "t1"]);
  });

  test("scores never rise down the list, and the limit holds", () => {
    const merged = interleaveSteps(
      [
        { id: "w1", score: 0.5 },
        { id: "w2", score: 0.2 },
      ],
      [[{ id: "s1", score: 0.9 }], [{ id: "t1", score: 0.1 }]],
      3,
    );
    expect(merged).toEqual([
      { id: "w1", score: 0.5 },
      { id: "w2", score: 0.2 },
      { id: "s1", score: 0.2 },
    ]);
  });
});
