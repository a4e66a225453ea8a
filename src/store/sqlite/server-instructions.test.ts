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

  test("all of them at once are what each gives alone, the file's and what is kept in memory over it", () => {
    const db = new Database(":memory:");
    createInstructionSchema(db);
    const writer = openInstructionStore(db, { writable: true });
    writer.put("github", "From the file.");
    writer.put("notes", "Notes from the file.");
    const reader = openInstructionStore(db, { writable: false });
    reader.put("github", "Said on this run.");
    reader.put("notes", undefined);
    reader.put("slack", "New on this run.");
    expect(Object.fromEntries(reader.all())).toEqual({
      github: "Said on this run.",
      slack: "New on this run.",
    });
    for (const server of ["github", "notes", "slack", "absent"])
      expect(reader.all().get(server)).toBe(reader.get(server));
    expect(Object.fromEntries(writer.all())).toEqual({
      github: "From the file.",
      notes: "Notes from the file.",
    });
  });

  test("a catalog file from before the table existed reads as empty", () => {
    const store = openInstructionStore(new Database(":memory:"), { writable: false });
    expect(store.get("github")).toBeUndefined();
    store.put("github", "Manage GitHub.");
    expect(store.get("github")).toBe("Manage GitHub.");
  });
});
