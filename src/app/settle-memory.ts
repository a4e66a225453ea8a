import type { Logger } from "../log.ts";

/** How long after start-up is over the memory it used is handed back, and how often it looks again. */
const SETTLE_AFTER_MS = 1000;
/** The longest the hand-back waits for what follows start-up (`isQuiet`) once start-up is over. */
const SETTLE_AT_MOST_MS = 30_000;

export interface SettleMemoryOptions {
  logger: Logger;
  /** Defaults to SETTLE_AFTER_MS. */
  afterMs?: number;
  /**
   * Whether the work that start-up sets off is done too (serve: retrieve_tools' description built
   * again from the first indexing); the hand-back waits for it, looking every `afterMs`, for at most
   * `atMostMs` (SETTLE_AT_MOST_MS).
   */
  isQuiet?: () => boolean;
  atMostMs?: number;
  /** What hands the memory back; JavaScriptCore's, through Bun, unless a test gives another. */
  shrink?: () => void;
}

/**
 * Once `startUp` is over (serve's first indexing pass), what it set off is done, and a second later,
 * hands back the memory start-up used and no longer needs, once: JavaScriptCore keeps the bytecode
 * of every function that ran (reading the config, connecting, the first listing and indexing, most
 * of which never runs again) and the allocator keeps the pages it freed. `Bun.shrink()` drops the
 * compiled code, collects and returns free pages to the system, as Bun does itself under memory
 * pressure: an idle serve holds about 5 MiB less (docs/benchmarks.md, Start-up). A function that
 * runs again is compiled again on its first run (once; a call's path costs nothing more after that).
 * So the hand-back waits for `isQuiet`: retrieve_tools' description, built again a second or two
 * after the indexing, runs the poisoning scan over every tool, whose three screens alone compile to
 * 1.3 MiB of matching code; handed back before it, they stayed for good. JavaScriptCore does it when
 * no JavaScript is running; nothing is added to any call. The returned function cancels a settle not
 * yet done (serve stopping).
 */
export function settleMemoryAfter(startUp: Promise<unknown>, options: SettleMemoryOptions): () => void {
  const shrink = options.shrink ?? bunShrink;
  const afterMs = options.afterMs ?? SETTLE_AFTER_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let isStopped = false;
  // A look that fails is no reason to keep the memory (nor to fail in a timer): taken as quiet.
  const isQuiet = () => {
    try {
      return options.isQuiet?.() ?? true;
    } catch {
      return true;
    }
  };
  const settle = (waitedMs: number) => {
    timer = setTimeout(() => {
      waitedMs += afterMs;
      if (!isQuiet() && waitedMs < (options.atMostMs ?? SETTLE_AT_MOST_MS)) return settle(waitedMs);
      const before = process.memoryUsage.rss();
      shrink();
      // The shrink runs once this callback returns (no JavaScript on the stack): read after it.
      setImmediate(() => {
        const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
        options.logger.debug(
          `start-up over: memory handed back, RSS ${mib(before)} -> ${mib(process.memoryUsage.rss())} MiB`,
        );
      });
    }, afterMs);
    timer.unref();
  };
  void startUp.then(
    () => {
      if (!isStopped) settle(0);
    },
    () => {},
  );
  return () => {
    isStopped = true;
    clearTimeout(timer);
  };
}

function bunShrink(): void {
  // Marked deprecated in Bun's types, which name no replacement; the pinned Bun has it, and a Bun
  // without it only keeps the memory.
  if (typeof Bun.shrink === "function") Bun.shrink();
}
