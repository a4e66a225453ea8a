import { describe, expect, test } from "bun:test";
import { useLiteKnows } from "./use-lite-words.ts";

describe("the words the built-in encoder has", () => {
  test("everyday requests are read, names and rarer words among them too", () => {
    for (const text of [
      "remove a memo",
      "what is 17 plus 25",
      "show me everything you remember",
      "remember that Alice works at Acme",
      "start a slow job that tells me how far along it is",
    ])
      expect([text, useLiteKnows(text)]).toEqual([text, true]);
  });

  test("keyboard mashing, ids, Latin filler and stop words alone are not", () => {
    for (const text of [
      "zzyzx qwfp",
      "xyzzy",
      "asdf",
      "qqq www eee",
      "lorem ipsum dolor sit amet",
      "what is it",
      "",
    ])
      expect([text, useLiteKnows(text)]).toEqual([text, false]);
  });
});
