/**
 * Waits until what the command wrote to stdout and stderr has reached the reader. Writes to a
 * pipe are queued, not made at once: a `process.exit` right after a large write cut `tools --json
 * | wc -c` at a multiple of 64 KiB. Ending the streams resolves once every queued write is out,
 * however slowly the reader reads; a reader that went away (EPIPE, `| head`) ends the wait too.
 *
 * Output that was lost (`> /dev/full`, a full disk, an I/O error) is said on stderr before that
 * ends too, and resolves to why, so that the exit code says it: a script must not take a cut-off
 * answer for a whole one. A reader that stopped reading is no failure.
 */
export async function flushOutput(): Promise<string | undefined> {
  const lost = await endStream(process.stdout);
  if (lost) process.stderr.write(`mcpproxy: could not write the output (${lost})\n`);
  await endStream(process.stderr);
  return lost;
}

function endStream(stream: NodeJS.WriteStream): Promise<string | undefined> {
  return new Promise((resolve) => {
    // Kept for good: a late write after end, or a reader gone, must not become an uncaught error.
    stream.on("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "EPIPE" ? undefined : (error.code ?? error.message)),
    );
    try {
      stream.end(() => resolve(undefined));
    } catch (error) {
      resolve((error as NodeJS.ErrnoException).code ?? String(error));
    }
  });
}
