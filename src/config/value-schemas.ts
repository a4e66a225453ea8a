import * as v from "valibot";

/**
 * The valibot pieces the config's schemas are built from (server-schema.ts, settings-schema.ts,
 * and the sections with files of their own: search, traces, httpAuth): JSON objects that are not
 * arrays, whole numbers and fractions in a range whether a file or a variable gives them,
 * case-insensitive choices, booleans as variables spell them, non-empty strings and absolute URLs.
 * A change to how a value is read or what its message says is made here, once for every key.
 */

// valibot's object and record schemas accept arrays, which a JSON config must not be.
const isPlainObject = (input: unknown) =>
  input !== null && typeof input === "object" && !Array.isArray(input);
export const jsonObject = <T extends v.GenericSchema>(schema: T, message: string) =>
  v.pipe(v.custom<v.InferInput<T>>(isPlainObject, message), schema);

export const intInRange = (min: number, max: number) =>
  v.pipe(
    v.union([v.number(), v.string()], `must be a whole number from ${min} to ${max}`),
    v.transform((input) => (typeof input === "string" && input.trim() !== "" ? Number(input) : input)),
    v.number(`must be a whole number from ${min} to ${max}`),
    v.integer(`must be a whole number from ${min} to ${max}`),
    v.minValue(min, `must be a whole number from ${min} to ${max}`),
    v.maxValue(max, `must be a whole number from ${min} to ${max}`),
  );

export const caseInsensitive = <const T extends readonly string[]>(options: T, message: string) =>
  v.pipe(
    v.string(message),
    v.transform((input) => input.trim().toLowerCase()),
    v.picklist(options, message),
  );

export const booleanLike = v.pipe(
  v.union([v.boolean(), v.string()], "must be true or false"),
  v.transform((input) => (typeof input === "boolean" ? input : input.trim().toLowerCase())),
  v.union([v.boolean(), v.picklist(["1", "0", "true", "false", "yes", "no", ""])], "must be true or false"),
  v.transform((input) => input === true || input === "1" || input === "true" || input === "yes"),
);

export const nonEmptyString = v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty"));
export const httpUrl = v.pipe(v.string("must be a string"), v.url("must be an absolute http(s) URL"));

export const fraction = v.pipe(
  v.union([v.number(), v.string()], "must be a number from 0 to 1"),
  v.transform((input) => (typeof input === "string" && input.trim() !== "" ? Number(input) : input)),
  v.number("must be a number from 0 to 1"),
  v.minValue(0, "must be a number from 0 to 1"),
  v.maxValue(1, "must be a number from 0 to 1"),
);
