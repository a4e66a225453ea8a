import { existsSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { pngChunk } from "../../src/tray/tray-icon.ts";

/**
 * A virtual X screen for the tray's test: Xvfb on a free display, a tray host (trayer, which
 * holds XEmbed icons), and screenshots read with xwd. Debian's packages: xvfb, trayer, x11-apps.
 */
export const X_MISSING = ["Xvfb", "trayer", "xwd"].filter((tool) => !Bun.which(tool));

export interface XScreen {
  display: string;
  /** The screen's pixels as RGB rows, and a PNG of them. */
  shot(): Promise<{ width: number; height: number; rgb: Uint8Array; png: Uint8Array }>;
  stop(): void;
}

export async function startXScreen(width = 640, height = 120): Promise<XScreen> {
  let number = 90 + Math.floor(Math.random() * 400);
  while (existsSync(`/tmp/.X11-unix/X${number}`) || existsSync(`/tmp/.X${number}-lock`)) number++;
  const display = `:${number}`;
  const xvfb = Bun.spawn(["Xvfb", display, "-screen", "0", `${width}x${height}x24`, "-nolisten", "tcp"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  for (let i = 0; i < 100 && !existsSync(`/tmp/.X11-unix/X${number}`); i++) await Bun.sleep(50);
  const trayer = Bun.spawn(
    [
      "trayer",
      "--edge",
      "top",
      "--align",
      "right",
      "--widthtype",
      "pixel",
      "--width",
      "160",
      "--height",
      "32",
      "--transparent",
      "false",
      "--tint",
      "0xdddddd",
      "--SetDockType",
      "false",
    ],
    { env: { ...process.env, DISPLAY: display }, stdout: "ignore", stderr: "ignore" },
  );
  await Bun.sleep(500);
  return {
    display,
    async shot() {
      const dump = Bun.spawn(["xwd", "-root", "-silent"], {
        env: { ...process.env, DISPLAY: display },
        stdout: "pipe",
      });
      const bytes = new Uint8Array(await new Response(dump.stdout).arrayBuffer());
      return fromXwd(bytes);
    },
    stop() {
      trayer.kill();
      xvfb.kill();
    },
  };
}

/** An XWD dump (ZPixmap, 24-bit TrueColor, least significant byte first) as RGB and PNG. */
function fromXwd(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const field = (i: number) => view.getUint32(i * 4);
  const headerSize = field(0);
  const width = field(4);
  const height = field(5);
  const bytesPerLine = field(12);
  const colours = field(19);
  // Pixels take 3 or 4 bytes, whatever bits_per_pixel says: the line length tells.
  const step = Math.floor(bytesPerLine / width) >= 4 && field(11) === 32 ? 4 : 3;
  const pixels = bytes.subarray(headerSize + colours * 12);
  const rgb = new Uint8Array(width * height * 3);
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      const at = y * bytesPerLine + x * step;
      const [b, g, r] = [pixels[at]!, pixels[at + 1]!, pixels[at + 2]!];
      rgb.set([r, g, b], (y * width + x) * 3);
      row.set([r, g, b], 1 + x * 3);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(Buffer.concat(rows))),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
  return { width, height, rgb, png };
}

/** How many pixels are exactly this colour. */
export function pixelsOf(rgb: Uint8Array, colour: readonly [number, number, number]): number {
  let count = 0;
  for (let i = 0; i < rgb.length; i += 3)
    if (rgb[i] === colour[0] && rgb[i + 1] === colour[1] && rgb[i + 2] === colour[2]) count++;
  return count;
}
