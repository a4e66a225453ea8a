import { spawn } from "node:child_process";

/**
 * Opens a URL the way a terminal program should: `$BROWSER` when set (a command, `%s` replaced by
 * the URL or the URL appended; several may be given separated by ":"), else the desktop's opener
 * (`open` on macOS, `xdg-open` with a display on Linux). Resolves to whether something was started;
 * the caller prints the URL either way, for a headless machine.
 */
export async function openBrowser(
  url: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<boolean> {
  const candidates: string[][] = [];
  for (const command of (env.BROWSER ?? "").split(":").filter((c) => c.trim())) {
    const words = command.trim().split(/\s+/);
    candidates.push(
      words.some((word) => word.includes("%s")) ? words.map((w) => w.replace("%s", url)) : [...words, url],
    );
  }
  if (candidates.length === 0) {
    if (process.platform === "darwin") candidates.push(["open", url]);
    else if (process.platform === "win32") candidates.push(["cmd", "/c", "start", "", url]);
    else if (env.DISPLAY || env.WAYLAND_DISPLAY) candidates.push(["xdg-open", url]);
  }
  for (const [command, ...args] of candidates) {
    if (command && (await started(command, args, env))) return true;
  }
  return false;
}

function started(command: string, args: string[], env: Readonly<Record<string, string | undefined>>) {
  return new Promise<boolean>((resolve) => {
    const child = spawn(command, args, { stdio: "ignore", detached: true, env: env as NodeJS.ProcessEnv });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}
