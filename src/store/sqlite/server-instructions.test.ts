import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import {
  createInstructionSchema,
  MAX_STORED_INSTRUCTIONS,
  openInstructionStore,
} from "./server-instructions.ts";

describe("the instruction store", () => {
  test("keeps what each server last said, drops it when it says nothing, and forgets removed servers", () => {
    const db = new Database(":memory:");
    createInstructionSchema(db);
    const store = openInstructionStore(db, { writable: true });
    store.put("github", "Manage GitHub.");
    store.put("notes", "Keep notes.");
    store.put("github", "Manage GitHub repositories.");
    // Another store on the same file (the next run) reads them.
    expect(openInstructionStore(db, { writable: true }).get("github")).toBe("Manage GitHub repositories.");
    store.put("notes", undefined);
    expect(store.get("notes")).toBeUndefined();
    store.put("notes", "Keep notes.");
    store.forgetExcept(new Set(["notes"]));
    expect(store.get("github")).toBeUndefined();
    expect(store.get("notes")).toBe("Keep notes.");
  });

  test("keeps only the start of a very long text", () => {
    const db = new Database(":memory:");
    createInstructionSchema(db);
    const store = openInstructionStore(db, { writable: true });
    store.put("big", "x".repeat(MAX_STORED_INSTRUCTIONS * 4));
    expect(store.get("big")?.length).toBe(MAX_STORED_INSTRUCTIONS);
  });

  test("read-only: what it learns is kept in memory over the file, which is not written", () => {
    const db = new Database(":memory:");
    createInstructionSchema(db);
    openInstructionStore(db, { writable: true }).put("github", "From the last run.");
    const reader = openInstructionStore(db, { writable: false });
    expect(reader.get("github")).toBe("From the last run.");
    reader.put("github", "Said on this run.");
    expect(reader.get("github")).toBe("Said on this run.");
    expect(openInstructionStore(db, { writable: true }).get("github")).toBe("From the last run.");
  });

  test("a catalog file from before the table existed reads as empty", () => {
    const store = openInstructionStore(new Database(":memory:"), { writable: false });
    expect(store.get("github")).toBeUndefined();
    store.put("github", "Manage GitHub.");
    expect(store.get("github")).toBe("Manage GitHub.");
  });
});
