import { describe, expect, test } from "bun:test";
import { inflateSync } from "node:zlib";
import { circleIcon } from "./tray-icon.ts";
import { COLOURS, type TrayItem, trayMenu } from "./tray-menu.ts";

const servers = [
  { name: "github", state: "connected" },
  { name: "files", state: "connected" },
];
const titles = (items: readonly TrayItem[]) => items.map((item) => item.title);
const ids = (items: readonly TrayItem[]): string[] =>
  items.flatMap((item) => [...(item.id ? [item.id] : []), ...ids(item.items ?? [])]);

describe("the tray's menu for each state", () => {
  test("all connected: green, a summary, each server with a toggle, console, pause, quit", () => {
    const menu = trayMenu({ servers, waiting: 0, paused: false });
    expect(menu.colour).toBe("connected");
    expect(titles(menu.items)).toEqual([
      "2 of 2 servers connected",
      "Servers",
      "Open console",
      "Pause calls",
      "Quit mcpproxy",
    ]);
    expect(menu.items[0]!.enabled).toBe(false);
    expect(ids(menu.items)).toEqual(["disable:github", "disable:files", "console", "pause", "quit"]);
    expect(menu.items[1]!.items!.every((item) => item.checked)).toBe(true);
    expect(menu.tooltip).toBe("mcpproxy: 2 of 2 servers connected");
  });

  test("something waits: blue, and the count first, which opens the approvals", () => {
    const menu = trayMenu({ servers, waiting: 3, paused: false });
    expect(menu.colour).toBe("waiting");
    expect(menu.items[1]).toMatchObject({ id: "approvals", title: "3 waiting for approval…", enabled: true });
    expect(menu.tooltip).toContain("3 waiting for approval");
  });

  test("a server failing: amber, named in the tooltip; a disabled one is fine and offers enable", () => {
    const menu = trayMenu({
      servers: [
        { name: "github", state: "failed" },
        { name: "files", state: "disabled" },
        { name: "agent", state: "awaiting-approval" },
      ],
      waiting: 0,
      paused: false,
    });
    expect(menu.colour).toBe("degraded");
    expect(menu.tooltip).toContain("github failed");
    expect(menu.tooltip).not.toContain("files");
    const list = menu.items.find((item) => item.title === "Servers")!.items!;
    expect(list.map((item) => [item.id, item.checked, item.enabled])).toEqual([
      ["disable:github", true, true],
      ["enable:files", false, true],
      ["disable:agent", true, false],
    ]);
  });

  test("paused: grey, says so, and offers Resume; waiting does not hide it", () => {
    const menu = trayMenu({ servers, waiting: 2, paused: true });
    expect(menu.colour).toBe("paused");
    expect(menu.items[0]!.title).toBe("Paused: calls are refused");
    expect(ids(menu.items)).toContain("resume");
    expect(ids(menu.items)).not.toContain("pause");
  });

  test("the service does not answer: red, and only Quit", () => {
    const menu = trayMenu({ waiting: 0, paused: false });
    expect(menu.colour).toBe("down");
    expect(ids(menu.items)).toEqual(["quit"]);
  });

  test("no servers at all: the server list is there, greyed", () => {
    const menu = trayMenu({ servers: [], waiting: 0, paused: false });
    expect(menu.colour).toBe("connected");
    expect(menu.items.find((item) => item.title === "Servers")!.enabled).toBe(false);
  });
});

describe("the tray's icon", () => {
  test("a PNG of the size asked, in the state's colour, transparent in the corners", () => {
    const png = circleIcon(COLOURS.waiting, 24);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const view = new DataView(png.buffer, png.byteOffset);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([24, 24]);
    const idatLength = view.getUint32(33);
    const pixels = inflateSync(png.subarray(41, 41 + idatLength));
    const rowBytes = 1 + 24 * 4;
    const at = (x: number, y: number) => [
      ...pixels.subarray(y * rowBytes + 1 + x * 4, y * rowBytes + 1 + x * 4 + 4),
    ];
    expect(at(12, 12)).toEqual([...COLOURS.waiting, 255]);
    expect(at(0, 0)[3]).toBe(0);
  });
});
