import { describeError } from "../errors.ts";

/** Set up in order, tear down in reverse; every step runs even when an earlier one fails. */
export interface CleanupStack {
  defer(label: string, step: () => unknown): void;
  /** Runs every deferred step, last first; returns the failures as "label: reason". */
  run(): Promise<string[]>;
}

export function createCleanupStack(): CleanupStack {
  const steps: { label: string; step: () => unknown }[] = [];
  return {
    defer(label, step) {
      steps.push({ label, step });
    },
    async run() {
      const failures: string[] = [];
      for (const { label, step } of steps.splice(0).reverse()) {
        try {
          await step();
        } catch (error) {
          failures.push(`${label}: ${describeError(error)}`);
        }
      }
      return failures;
    },
  };
}
