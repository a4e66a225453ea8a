import { describe, expect, test } from "bun:test";
import { withoutLiterals } from "./query-text.ts";

const words = (text: string) => text.split(/\s+/).filter(Boolean).join(" ");

describe("withoutLiterals", () => {
  test("drops quoted values, URLs, e-mail addresses, paths and hex ids", () => {
    expect(words(withoutLiterals(`Delete the task "TKS-123" in 'my board' now`))).toBe(
      "Delete the task in now",
    );
    expect(words(withoutLiterals("Fetch https://example.com/a?b=c and mail bob@example.org"))).toBe(
      "Fetch and mail",
    );
    expect(words(withoutLiterals("Read /home/user/notes.md and ./src/x.ts"))).toBe("Read and");
    expect(words(withoutLiterals("Send to 0xaBcDeF1234567890 on Goerli"))).toBe("Send to on Goerli");
  });

  test("keeps apostrophes inside words", () => {
    expect(words(withoutLiterals("Show the user's files and don't wait"))).toBe(
      "Show the user's files and don't wait",
    );
  });
});
