/**
 * What the test helpers (helpers.ts, model-assets.ts) start during a test is stopped when that test
 * ends, even when it fails: run-guard.ts marks each test's start and calls `stopStartedInTest`
 * after it. A test may still stop things itself (every stop here may be called twice). Outside a
 * test (a file's `beforeAll`) nothing is tracked: what a file shares between its tests, its
 * `afterAll` stops, and the run guard fails the run if it does not.
 */
const started: (() => unknown)[] = [];
let isInTest = false;
/** The test file (Bun.main) whose tests share what they start: see keepStartedAcrossTests. */
let sharingFile: string | undefined;

export function markTestStart(): void {
  isInTest = true;
}

/** Stops, last first, what was started since the test began; a stop that throws does not stop the others. */
export async function stopStartedInTest(): Promise<void> {
  isInTest = false;
  for (const stop of started.splice(0).reverse()) {
    try {
      await stop();
    } catch {
      // already gone, or its own test reported why
    }
  }
}

/** Has `stop` called when the current test ends (when one is running); returns it. */
export function stopAfterTest<T extends () => unknown>(stop: T): T {
  if (isInTest && sharingFile !== Bun.main) started.push(stop);
  return stop;
}

/**
 * For a file whose tests are the steps of one story (a proxy started by the first step is used by
 * the next): what its tests start is kept until the file's `afterAll` stops it. Only that file: the
 * choice is keyed to it.
 */
export function keepStartedAcrossTests(): void {
  sharingFile = Bun.main;
}
