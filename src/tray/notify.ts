import { spawn } from "node:child_process";

/**
 * A desktop notification: `notify-send` on Linux (Debian's libnotify-bin), `osascript` on macOS.
 * Where neither exists nothing is shown (the tray's icon and tooltip say it anyway).
 */
export function notify(title: string, body: string): void {
  const command =
    process.platform === "darwin"
      ? [
          "osascript",
          "-e",
          `display notification ${JSON.stringify(body)} with title ${JSON.stringify(title)}`,
        ]
      : process.platform === "linux" && Bun.which("notify-send")
        ? ["notify-send", "--app-name=mcpproxy", title, body]
        : undefined;
  if (!command) return;
  try {
    const child = spawn(command[0]!, command.slice(1), { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No notification: the icon says it.
  }
}
