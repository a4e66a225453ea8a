/**
 * The shape of a tool call's arguments without their values, for the debug log: names and types
 * say what a call looked like, values may be secrets or personal data and never reach a log.
 * `{"path": "/x", "lines": [1, 2]}` becomes `{"path": "string", "lines": "array(2)"}`.
 */
export function argumentShape(value: unknown, depth = 0): unknown {
  if (value === null) return "null";
  if (Array.isArray(value)) return `array(${value.length})`;
  if (typeof value !== "object") return typeof value;
  if (depth >= 3) return "object";
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, argumentShape(item, depth + 1)]),
  );
}
