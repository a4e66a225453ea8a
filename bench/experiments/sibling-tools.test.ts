import { describe, expect, test } from "bun:test";
import { requestEvidence } from "./form-rerank.ts";
import { areSiblings, decideSiblings } from "./sibling-tools.ts";

const toolOf = (id: string) => ({
  server: id.slice(0, id.indexOf("/")),
  tool: id.slice(id.indexOf("/") + 1),
});
const ids = (hits: readonly { id: string }[]) => hits.map((hit) => hit.id);

describe("sibling tools (the experiment of bench/experiments/stem-sibling-experiment.ts)", () => {
  test("names of one resource that differ in one or two words are siblings; unrelated or equal names are not", () => {
    expect(areSiblings("list_parcels", "get_parcel")).toBe(true);
    expect(areSiblings("get_parcel", "get_parcel_label")).toBe(true);
    expect(areSiblings("get_parcel", "cancel_courier_booking")).toBe(false);
    expect(areSiblings("get_parcel", "get_parcel")).toBe(false);
  });

  test("within a family the words that set names apart decide, and the family keeps its places and scores", () => {
    const hits = [
      { id: "ship/list_parcels", score: 0.6 },
      { id: "weather/forecast", score: 0.5 },
      { id: "ship/get_parcel", score: 0.4 },
    ];
    const decided = decideSiblings(hits, requestEvidence("fetch parcel 7 for me"), toolOf);
    expect(ids(decided)).toEqual(["ship/get_parcel", "weather/forecast", "ship/list_parcels"]);
    expect(decided.map((hit) => hit.score)).toEqual([0.6, 0.5, 0.4]);
  });

  test("a word that fits two operations does not vote, and description-only evidence is left as it ranked", () => {
    const hits = [
      { id: "ship/list_parcels", score: 0.6 },
      { id: "ship/get_parcel", score: 0.5 },
    ];
    expect(ids(decideSiblings(hits, requestEvidence("show parcel 7"), toolOf))).toEqual(ids(hits));
  });

  test("a name word the request does not explain costs, unless its cost is set to 0", () => {
    const hits = [
      { id: "ship/get_parcel_label", score: 0.6 },
      { id: "ship/get_parcel", score: 0.5 },
    ];
    const request = requestEvidence("get parcel 7");
    expect(ids(decideSiblings(hits, request, toolOf))).toEqual(["ship/get_parcel", "ship/get_parcel_label"]);
    expect(ids(decideSiblings(hits, request, toolOf, 10, 0))).toEqual(ids(hits));
  });
});
