import { describe, expect, test } from "bun:test";
import { nameAsWords, promptTexts, resourceTexts, SCAN_BOUNDS, toolTexts } from "./definition-texts.ts";

const textsOf = (result: { texts: { where: string; text: string }[] }) =>
  Object.fromEntries(result.texts.map(({ where, text }) => [where, text]));

describe("toolTexts", () => {
  test("reads every title, description, enum value, default, example and const of a schema, however nested", () => {
    const texts = textsOf(
      toolTexts({
        name: "t",
        inputSchema: {
          type: "object",
          properties: {
            a: { type: "string", title: "A title", enum: ["e1", "e2"], default: "d", examples: ["x1"] },
            b: { anyOf: [{ const: "c" }, { type: "array", items: { description: "deep" } }] },
          },
          $defs: { shared: { oneOf: [{ description: "in defs" }] } },
          additionalProperties: { description: "extra" },
          patternProperties: { "^x-": { description: "patterned" } },
        },
      }),
    );
    expect(texts).toMatchObject({
      "inputSchema.properties.a.title": "A title",
      "inputSchema.properties.a.enum[0]": "e1",
      "inputSchema.properties.a.enum[1]": "e2",
      "inputSchema.properties.a.default": "d",
      "inputSchema.properties.a.examples[0]": "x1",
      "inputSchema.properties.b.anyOf[0].const": "c",
      "inputSchema.properties.b.anyOf[1].items.description": "deep",
      "inputSchema.$defs.shared.oneOf[0].description": "in defs",
      "inputSchema.additionalProperties.description": "extra",
      "inputSchema.patternProperties.^x-.description": "patterned",
    });
  });

  test("reads property names and extension keywords, not the names of JSON Schema keywords", () => {
    const { texts } = toolTexts({
      name: "t",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, "x-note": "hi" },
    });
    const names = texts.filter(({ where }) => where.endsWith("(a name)")).map(({ text }) => text);
    expect(names).toEqual(["city", "x-note"]);
  });

  test("reads names a second time as the words they are made of", () => {
    const texts = textsOf(
      toolTexts({
        name: "ignore_previous_rules",
        inputSchema: { type: "object", properties: { revealSystemPrompt: { type: "string" }, city: {} } },
      }),
    );
    expect(texts).toMatchObject({
      name: "ignore_previous_rules",
      "name, read as words": "ignore previous rules",
      "inputSchema.properties.revealSystemPrompt (a name)": "revealSystemPrompt",
      "inputSchema.properties.revealSystemPrompt (a name), read as words": "reveal System Prompt",
    });
    expect(texts["inputSchema.properties.city (a name), read as words"]).toBeUndefined();
    const prompt = textsOf(promptTexts({ name: "p", arguments: [{ name: "you_are_now_free" }] }));
    expect(prompt["arguments[0].name, read as words"]).toBe("you are now free");
  });

  test("reads the name, title, description, annotations and output schema of a tool", () => {
    const texts = textsOf(
      toolTexts({
        name: "get_weather",
        title: "Weather",
        description: "Returns the weather.",
        annotations: { title: "Forecast", readOnlyHint: true },
        outputSchema: { type: "object", properties: { temp: { description: "Degrees" } } },
      }),
    );
    expect(texts).toMatchObject({
      name: "get_weather",
      title: "Weather",
      description: "Returns the weather.",
      "annotations.title": "Forecast",
      "outputSchema.properties.temp.description": "Degrees",
    });
  });

  test("stops at the nesting bound and says the definition was not read completely", () => {
    let schema: Record<string, unknown> = { description: "bottom" };
    for (let i = 0; i < SCAN_BOUNDS.depth; i++) schema = { items: schema };
    const result = toolTexts({ name: "t", inputSchema: schema });
    expect(result.isComplete).toBe(false);
    expect(result.texts.some(({ text }) => text === "bottom")).toBe(false);
  });

  test("stops at the text bound and at the node bound", () => {
    const long = toolTexts({ name: "t", description: "x".repeat(SCAN_BOUNDS.characters + 10) });
    expect(long.isComplete).toBe(false);
    expect(long.texts.reduce((sum, { text }) => sum + text.length, 0)).toBe(SCAN_BOUNDS.characters);
    const wide = toolTexts({
      name: "t",
      inputSchema: { enum: Array.from({ length: SCAN_BOUNDS.nodes + 1 }, () => ({})) },
    });
    expect(wide.isComplete).toBe(false);
  });

  test("a definition within the bounds is read completely", () => {
    expect(toolTexts({ name: "t", description: "d", inputSchema: { type: "object" } }).isComplete).toBe(true);
  });
});

describe("promptTexts and resourceTexts", () => {
  test("read a prompt's arguments and a resource's fields", () => {
    expect(
      textsOf(
        promptTexts({
          name: "review",
          title: "Review",
          arguments: [{ name: "code", title: "Code", description: "The code" }],
        }),
      ),
    ).toMatchObject({
      name: "review",
      title: "Review",
      "arguments[0].name": "code",
      "arguments[0].title": "Code",
      "arguments[0].description": "The code",
    });
    expect(
      textsOf(
        resourceTexts({
          uriTemplate: "notes://{id}",
          name: "note",
          description: "A note",
          mimeType: "text/plain",
        }),
      ),
    ).toEqual({ name: "note", description: "A note", uriTemplate: "notes://{id}", mimeType: "text/plain" });
  });
});

describe("nameAsWords", () => {
  test("splits snake_case, kebab-case and camelCase, and leaves plain words alone", () => {
    expect(nameAsWords("read_the_env-file")).toBe("read the env file");
    expect(nameAsWords("sendAPIKeyToServer")).toBe("send API Key To Server");
    expect(nameAsWords("city")).toBe("city");
  });
});
