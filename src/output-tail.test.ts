import { expect, test } from "bun:test";
import { createOutputTail } from "./output-tail.ts";

test("keeps only the last lines, joining chunks split mid-line", () => {
  const tail = createOutputTail(3, 1000);
  tail.push("one\ntw");
  tail.push(new TextEncoder().encode("o\nthree\n\nfour\nfi"));
  expect(tail.text()).toBe("three\nfour\nfi");
});

test("bounds the characters kept from one endless line", () => {
  const tail = createOutputTail(5, 50);
  for (let i = 0; i < 100; i++) tail.push("x".repeat(100));
  expect(tail.text().length).toBeLessThanOrEqual(51);
});
