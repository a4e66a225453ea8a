import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaType, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

/**
 * One JSON-schema validator for every SDK Client and Server the proxy makes. By default each makes
 * its own Ajv (with its formats) when it is constructed: with 2,000 upstream servers, or an HTTP
 * session per client, that was megabytes and milliseconds spent on validators the proxy's raw
 * requests never use. This one is made the first time something needs it.
 */
let shared: AjvJsonSchemaValidator | undefined;

export const sharedSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType) {
    shared ??= new AjvJsonSchemaValidator();
    return shared.getValidator<T>(schema);
  },
};
