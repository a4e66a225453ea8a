import type { JsonSchemaType, jsonSchemaValidator } from "@modelcontextprotocol/client";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { ajvFor } from "../json-schema-dialects.ts";

/**
 * One JSON-schema validator for every SDK Client and Server the proxy makes. By default each makes
 * its own Ajv (with its formats) when it is constructed: with 2,000 upstream servers, or an HTTP
 * session per client, that was megabytes and milliseconds spent on validators the proxy's raw
 * requests never use. These are made the first time something needs them, one per JSON Schema
 * dialect (the SDK's own is draft-07 only; see json-schema-dialects.ts).
 */
// Weak: an Ajv replaced after its share of compiles (json-schema-dialects.ts) goes with its wrapper.
const shared = new WeakMap<object, AjvJsonSchemaValidator>();

export const sharedSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType) {
    const ajv = ajvFor(schema);
    let validator = shared.get(ajv);
    if (!validator) {
      validator = new AjvJsonSchemaValidator(ajv as never);
      shared.set(ajv, validator);
    }
    return validator.getValidator<T>(schema);
  },
};
