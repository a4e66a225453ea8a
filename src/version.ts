import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
export const PRODUCT = "mcpproxy";

// Replaced by scripts/compile.ts (bun build --define); absent when running from source.
declare const MCPPROXY_BUILD_COMMIT: string | undefined;
declare const MCPPROXY_BUILD_DATE: string | undefined;

/** The commit and date the binary was built from; commit "source" when running main.ts directly. */
const BUILD = {
  commit: typeof MCPPROXY_BUILD_COMMIT === "string" ? MCPPROXY_BUILD_COMMIT : "source",
  date: typeof MCPPROXY_BUILD_DATE === "string" ? MCPPROXY_BUILD_DATE : "",
};

/** What `mcpproxy --version` prints: `mcpproxy 0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-23)`. */
export function versionLine(): string {
  return BUILD.commit === "source"
    ? `${PRODUCT} ${VERSION} (from source)`
    : `${PRODUCT} ${VERSION} (commit ${BUILD.commit}, built ${BUILD.date})`;
}
