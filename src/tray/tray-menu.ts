/**
 * What the tray shows for a state of the service: the icon's colour at a glance, its tooltip, and
 * the menu (what waits for approval, each server with its state and a toggle, Open console,
 * Pause/Resume, Quit). Pure: the tray (run-tray.ts) draws it and maps a click back by its id.
 */
export interface TrayState {
  /** Unset while the service cannot be reached. */
  servers?: readonly { name: string; state: string; toolCount?: number }[] | undefined;
  waiting: number;
  paused: boolean;
}

export type TrayColour = "connected" | "degraded" | "waiting" | "paused" | "down";

export interface TrayItem {
  /** What a click does: "console", "pause", "resume", "quit", "approvals", "enable:NAME", "disable:NAME"; none for a label. */
  id?: string | undefined;
  title: string;
  tooltip?: string | undefined;
  enabled: boolean;
  checked?: boolean | undefined;
  items?: TrayItem[] | undefined;
}

export interface TrayMenu {
  colour: TrayColour;
  tooltip: string;
  items: TrayItem[];
}

/** The states a server is fine in (or deliberately off): anything else makes the icon "degraded". */
const FINE = new Set(["connected", "disabled", "configured"]);

export function trayMenu(state: TrayState): TrayMenu {
  const servers = state.servers;
  if (!servers) {
    return {
      colour: "down",
      tooltip: "mcpproxy: the service does not answer",
      items: [
        { title: "The service does not answer", enabled: false },
        { id: "quit", title: "Quit tray", enabled: true },
      ],
    };
  }
  const troubled = servers.filter((server) => !FINE.has(server.state));
  const connected = servers.filter((server) => server.state === "connected").length;
  const colour: TrayColour = state.paused
    ? "paused"
    : state.waiting > 0
      ? "waiting"
      : troubled.length > 0
        ? "degraded"
        : "connected";
  const summary = state.paused
    ? "Paused: calls are refused"
    : `${connected} of ${servers.length} server${servers.length === 1 ? "" : "s"} connected`;
  const items: TrayItem[] = [{ title: summary, enabled: false }];
  if (state.waiting > 0)
    items.push({
      id: "approvals",
      title: `${state.waiting} waiting for approval…`,
      tooltip: "Open the console's Approvals",
      enabled: true,
    });
  items.push({
    title: "Servers",
    enabled: servers.length > 0,
    items: servers.map((server) => {
      const isOff = server.state === "disabled";
      return {
        id: `${isOff ? "enable" : "disable"}:${server.name}`,
        title: `${server.name}: ${server.state}`,
        tooltip: isOff ? `Enable ${server.name}` : `Disable ${server.name}`,
        enabled: server.state !== "awaiting-approval",
        checked: !isOff,
      };
    }),
  });
  items.push(
    { id: "console", title: "Open console", enabled: true },
    state.paused
      ? { id: "resume", title: "Resume calls", enabled: true }
      : {
          id: "pause",
          title: "Pause calls",
          tooltip: "Stop answering calls without stopping the servers",
          enabled: true,
        },
    { id: "quit", title: "Quit mcpproxy", tooltip: "Stop the service and its servers", enabled: true },
  );
  const tooltip = [
    `mcpproxy: ${summary.toLowerCase()}`,
    ...(state.waiting > 0 ? [`${state.waiting} waiting for approval`] : []),
    ...(troubled.length > 0 && !state.paused
      ? [`${troubled.map((server) => `${server.name} ${server.state}`).join(", ")}`]
      : []),
  ].join("\n");
  return { colour, tooltip, items };
}

/** The RGB colour of the icon for each state. */
export const COLOURS: Record<TrayColour, readonly [number, number, number]> = {
  connected: [23, 128, 61],
  degraded: [196, 126, 0],
  waiting: [31, 95, 191],
  paused: [110, 118, 129],
  down: [180, 35, 24],
};
