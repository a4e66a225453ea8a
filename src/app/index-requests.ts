import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../atomic-file.ts";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { isAlive } from "../store/sqlite/writer-lock.ts";
import type { IndexSummary } from "./index-summary.ts";

/**
 * `mcpproxy index` while a `serve` keeps the data dir: instead of failing ("run index when it has
 * finished", and a serve never finishes), `index` leaves a request in the data dir and the serve,
 * which has the servers connected already, re-indexes them and answers with the summary `index`
 * prints. Files, because a serve over stdio has no other door: `index-request-ID.json` (left by
 * index), renamed `.taken` by the serve when it starts, and `index-answer-ID.json` (the summary).
 * The data dir is the user's alone (0700), so only the user can ask.
 */
const REQUEST = /^index-request-([\w-]+)\.json$/;
const ANSWER = /^index-answer-([\w-]+)\.json$/;
/** The pid of the `index` run that asked (the request's id starts with it). */
const askerOf = (id: string) => Number.parseInt(id, 10);
const requestFile = (dataDir: string, id: string) => join(dataDir, `index-request-${id}.json`);
const takenFile = (dataDir: string, id: string) => join(dataDir, `index-request-${id}.taken`);
const answerFile = (dataDir: string, id: string) => join(dataDir, `index-answer-${id}.json`);

/** How often a serve looks for requests, and `index` for the answer. */
const POLL_MS = 100;
/**
 * How long a request may wait to be taken. A serve takes requests once its catalog and servers are
 * set up, which can take a while when it starts (embedding every tool on a first run); past this,
 * it is stuck.
 */
export const TAKE_WAIT_MS = 120_000;
/** When `index` says what it waits for, if the serve has not taken the request yet. */
const SAY_WAITING_MS = 3_000;

/**
 * Asks the serve with this pid to re-index and waits for its summary. "gone" when the serve ended
 * first (the lock is free: index itself), "unanswered" when it did not take the request in time.
 */
export async function askServeToIndex(
  dataDir: string,
  servePid: number,
  /** Told once when the serve has not taken the request after a few seconds. */
  onSlow?: () => void,
): Promise<IndexSummary | "gone" | "unanswered"> {
  const id = `${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const files = [requestFile(dataDir, id), takenFile(dataDir, id), answerFile(dataDir, id)];
  writeFileAtomicSync(files[0]!, `${JSON.stringify({ pid: process.pid })}\n`);
  const asked = Date.now();
  let isSlow = false;
  try {
    for (;;) {
      const answer = readAnswer(files[2]!);
      if (answer) return answer;
      if (!isAlive(servePid)) return "gone";
      const waited = Date.now() - asked;
      if (!isSlow && waited > SAY_WAITING_MS && existsSync(files[0]!)) {
        isSlow = true;
        onSlow?.();
      }
      if (waited > TAKE_WAIT_MS && withdraw(files[0]!)) return "unanswered";
      await Bun.sleep(POLL_MS);
    }
  } finally {
    for (const file of files) rmSync(file, { force: true });
  }
}

/**
 * The serve's side: takes every request it finds and answers it with one re-indexing pass (more
 * requests arriving meanwhile get the next pass). Returns a function that stops.
 */
export function startIndexRequests(
  dataDir: string,
  reindex: () => Promise<IndexSummary>,
  logger: Logger,
): () => void {
  const waiting: string[] = [];
  let isRunning = false;
  const run = async () => {
    isRunning = true;
    while (waiting.length > 0) {
      const ids = waiting.splice(0);
      logger.info(`re-indexing every server: \`mcpproxy index\` asked (${ids.length} request(s))`);
      let summary: IndexSummary;
      try {
        summary = await reindex();
      } catch (error) {
        summary = { text: `Re-indexing failed: ${describeError(error)}\n`, code: 1 };
      }
      for (const id of ids) {
        try {
          writeFileAtomicSync(answerFile(dataDir, id), JSON.stringify(summary));
        } catch (error) {
          logger.warn(`could not answer an index request: ${describeError(error)}`);
        }
        rmSync(takenFile(dataDir, id), { force: true });
      }
    }
    isRunning = false;
  };
  const look = () => {
    let names: string[];
    try {
      names = readdirSync(dataDir);
    } catch {
      return;
    }
    for (const name of names) {
      // What an `index` killed while it waited left behind.
      const answered = ANSWER.exec(name)?.[1];
      if (answered && !isAlive(askerOf(answered))) rmSync(join(dataDir, name), { force: true });
      const id = REQUEST.exec(name)?.[1];
      if (!id) continue;
      if (!isAlive(askerOf(id))) {
        rmSync(requestFile(dataDir, id), { force: true });
        continue;
      }
      try {
        renameSync(requestFile(dataDir, id), takenFile(dataDir, id));
        waiting.push(id);
      } catch {
        // withdrawn meanwhile
      }
    }
    if (waiting.length > 0 && !isRunning) void run();
  };
  const timer = setInterval(look, POLL_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}

function readAnswer(path: string): IndexSummary | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as IndexSummary;
    return typeof parsed.text === "string" && typeof parsed.code === "number" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Takes back a request not taken yet; false when the serve took it meanwhile (or before). */
function withdraw(path: string): boolean {
  try {
    rmSync(path);
    return true;
  } catch {
    return false;
  }
}
