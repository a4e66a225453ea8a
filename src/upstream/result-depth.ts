/**
 * How deep a server's result may nest arrays and objects. JSON.parse reads 100,000 levels, but
 * writing such a value to the client overflows the stack: the answer was lost and the call hung
 * until its timeout. Far above anything a real result needs.
 */
export const MAX_RESULT_DEPTH = 1_000;

/** Whether `value` nests more than `max` levels deep. Iterative: a deep value cannot overflow the stack here. */
export function isNestedDeeperThan(value: unknown, max: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === "object") {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
