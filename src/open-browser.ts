import { spawn } from "node:child_process";

/**
 * Opens `url` in the person's browser: `$BROWSER` (its first command; `%s` stands for the URL), else
 * `open` on macOS, `xdg-open` on a Linux desktop, `start` on Windows. Says false when there is no
 * way to (no desktop): the caller has printed the URL anyway.
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const browser = env.BROWSER?.split(":")[0]?.trim();
  const hasDesktop = Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  const opener = browser
    ? browser
    : process.platform === "darwin"
      ? "open"
      : process.platform === "win32"
        ? "explorer"
        : hasDesktop && Bun.which("xdg-open")
          ? "xdg-open"
          : undefined;
  if (!opener) return false;
  const words = opener.split(/\s+/);
  const args = words.slice(1).map((word) => word.replace("%s", url));
  if (!opener.includes("%s")) args.push(url);
  try {
    const child = spawn(words[0]!, args, { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
