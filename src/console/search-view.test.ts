import { describe, expect, test } from "bun:test";
import { explainHit, searchView } from "./search-view.ts";

const hit = {
  name: "mail__send_email",
  server: "mail",
  tool: "send_email",
  description: "Send an email message to a recipient.",
  inputSchema: { type: "object", properties: { recipient: { type: "string", description: "who gets it" } } },
  score: 0.8,
};

describe("why a hit ranked", () => {
  test("names each field holding a word of the request, exact words before stems", () => {
    const why = explainHit("send emails to my boss", hit);
    expect(why.find((item) => item.field === "name")?.words).toEqual(["send", "~email"]);
    expect(why.find((item) => item.field === "description")?.words).toEqual(["send", "~email"]);
    expect(why.some((item) => item.field === "params")).toBe(false);
  });

  test("a hit sharing no word was found by meaning", () => {
    expect(explainHit("notify my manager", hit)).toEqual([]);
    expect(searchView("notify my manager", "", [], { query: "q", tools: [hit] })).toContain("by meaning");
  });

  test("what a tool says is escaped", () => {
    const hostile = { ...hit, description: "<img src=x onerror=alert(1)>" };
    const page = searchView("send", "", [], { query: "send", tools: [hostile] });
    expect(page).not.toContain("<img");
    expect(page).toContain("&#60;img");
  });
});
