import { describe, expect, test } from "bun:test";
import { askedOperation, OPERATION_WEIGHT, rescoreByOperation } from "./operation-agreement.ts";

const hits = [
  { id: "db/list_records", score: 0.5 },
  { id: "db/get_record", score: 0.49 },
  { id: "db/describe_table", score: 0.3 },
  { id: "db/export", score: 0.2 },
];
const toolName = (id: string) => id.slice(id.indexOf("/") + 1);

describe("operation agreement", () => {
  test("a request naming one operation lifts the sibling whose name states it and lowers the others", () => {
    const asked = askedOperation("show me the details of record 7");
    expect(asked).toBe("get");
    const ranked = rescoreByOperation(asked!, hits, toolName);
    expect(ranked.map((hit) => hit.id)).toEqual([
      "db/get_record",
      "db/list_records",
      "db/describe_table",
      "db/export",
    ]);
    expect(ranked[0]!.score).toBeCloseTo(0.49 + OPERATION_WEIGHT);
    expect(ranked.find((hit) => hit.id === "db/list_records")!.score).toBeCloseTo(0.5 - OPERATION_WEIGHT);
    // A tool whose name states no operation keeps its score.
    expect(ranked.find((hit) => hit.id === "db/export")!.score).toBe(0.2);
  });

  test("words that fit a list and a get alike do not vote", () => {
    for (const query of ["show the open tickets", "display ticket 42", "view the ticket queue"]) {
      expect(askedOperation(query)).toBeUndefined();
    }
    // Beside a word that names one operation, they leave the decision to it.
    expect(askedOperation("show the details of ticket 42")).toBe("get");
    expect(askedOperation("show and list the open tickets")).toBe("list");
  });

  test("multi-step requests and requests naming several operations or none are left as they are", () => {
    for (const query of [
      "get the record, then delete it",
      "fetch record 7. After that, list all tables",
      "list the records and delete the old ones",
      "records of the orders table",
    ]) {
      expect(askedOperation(query)).toBeUndefined();
    }
  });
});
