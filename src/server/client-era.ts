/**
 * Which revision a client speaks: `legacy` (2025-11-25 and older: `initialize`, one session per
 * connection) or `modern` (2026-07-28: stateless requests, each carrying its protocol version and
 * capabilities). A modern client has no session, so it gets one cacheable tools/list
 * (`retrieve_tools`, `call_tool` and the management tools) whatever `--routing` says: the revision
 * forbids a list that varies with earlier requests. It changes only with retrieve_tools'
 * description (the servers behind the proxy), announced on listen streams. Dynamic and auto
 * routing stay for legacy sessions.
 * `all` applies to both eras: its list follows the catalog, as a server's own list does, never a
 * client's earlier requests; a change reaches 2026 clients as the listen stream's tools event.
 */
export type ClientEra = "legacy" | "modern";
