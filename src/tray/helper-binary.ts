import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readEmbeddedFile } from "../index/embedders/packed-file.ts";

/**
 * The tray's native helper: the systray2 package's program for this system (a small Go program
 * that draws the icon and the menu, and speaks JSON lines on its stdin and stdout), embedded in the
 * binary (only the target system's: scripts/compile.ts sets MCPPROXY_TARGET_OS) and written to
 * `<dataDir>/tray/` on first use, named by its hash so an upgrade writes the new one beside.
 */
declare const MCPPROXY_TARGET_OS: string | undefined;

const targetOs = typeof MCPPROXY_TARGET_OS === "string" ? MCPPROXY_TARGET_OS : process.platform;

/** The embedded helper's path (in the binary, or in node_modules when run from source); undefined where there is none. */
async function embeddedHelper(): Promise<{ path: string; name: string } | undefined> {
  if (process.platform !== targetOs) return undefined;
  if (targetOs === "linux")
    return { path: (await import("./helper-linux.ts")).default, name: "tray_linux_release" };
  if (targetOs === "darwin")
    return { path: (await import("./helper-darwin.ts")).default, name: "tray_darwin_release" };
  if (targetOs === "win32")
    return { path: (await import("./helper-windows.ts")).default, name: "tray_windows_release.exe" };
  return undefined;
}

/** The helper written out to the data dir (once per version of it), ready to run. */
export async function extractHelper(dataDir: string): Promise<string | undefined> {
  const embedded = await embeddedHelper();
  if (!embedded) return undefined;
  const bytes = readEmbeddedFile(embedded.path);
  const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const dir = join(dataDir, "tray", hash);
  const path = join(dir, embedded.name);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const partial = `${path}.${process.pid}.part`;
  writeFileSync(partial, bytes, { mode: 0o700 });
  chmodSync(partial, 0o700);
  renameSync(partial, path);
  return path;
}
