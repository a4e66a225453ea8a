import {
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_TOOL_LIST_BYTES,
  DEFAULT_MAX_TOOLS,
} from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import type { ToolListBounds } from "./server-lists.ts";

/**
 * The bounds on what a server can make the proxy hold: its longest message (a stdio line, an HTTP
 * body, an SSE event) and its whole tool list (tools and bytes, all pages together). Read from the
 * config (`upstreamBounds`), then resolved for each connect with the server's own settings first
 * and the defaults last (`resolveBounds`); json-lines.ts, bounded-fetch.ts and server-lists.ts
 * hold a server to them.
 */

/** What bounds a server's messages and tool list: one place, so serve, index and doctor agree. */
export interface UpstreamBounds {
  /** The longest message accepted from the server (stdio line, HTTP body, SSE event), in bytes. */
  maxResultBytes?: number;
  /** Bounds on its whole tool list, all pages together (the server's own maxTools/maxToolListBytes win). */
  maxTools?: number;
  maxToolListBytes?: number;
}

export function upstreamBounds(config: {
  maxResultBytes: number;
  maxTools: number;
  maxToolListBytes: number;
}): UpstreamBounds {
  return {
    maxResultBytes: config.maxResultBytes,
    maxTools: config.maxTools,
    maxToolListBytes: config.maxToolListBytes,
  };
}

/** The bounds of one connect to `server`: its own settings, else the proxy's, else the defaults. */
export function resolveBounds(
  server: ServerConfig,
  bounds: UpstreamBounds,
): { maxResultBytes: number; toolList: ToolListBounds } {
  return {
    maxResultBytes: bounds.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    toolList: {
      maxTools: server.maxTools ?? bounds.maxTools ?? DEFAULT_MAX_TOOLS,
      maxToolListBytes: server.maxToolListBytes ?? bounds.maxToolListBytes ?? DEFAULT_MAX_TOOL_LIST_BYTES,
    },
  };
}
