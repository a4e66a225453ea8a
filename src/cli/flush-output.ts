/**
 * Waits until what the command wrote to stdout and stderr has reached the reader. Writes to a
 * pipe are queued, not made at once: a `process.exit` right after a large write cut `tools --json
 * | wc -c` at a multiple of 64 KiB. Ending the streams resolves once every queued write is out,
 * however slowly the reader reads; a reader that went away (EPIPE, `| head`) ends the wait too.
 */
export async function flushOutput(): Promise<void> {
  await Promise.all([endStream(process.stdout), endStream(process.stderr)]);
}

function endStream(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    // Kept for good: a late write after end, or a reader gone, must not become an uncaught error.
    stream.on("error", () => resolve());
    try {
      stream.end(() => resolve());
    } catch {
      resolve();
    }
  });
}
