import { escapeHtml } from "../security/html-text.ts";
import { PRODUCT, VERSION } from "../version.ts";

/**
 * The console's page frame and what every view shares: escaping (everything shown passes through
 * `html`), the navigation, and the forms that change state (each a POST carrying the session's
 * CSRF token). The style and the one small script are served by the binary (console-assets.ts):
 * the pages load nothing from elsewhere, and the content security policy says so.
 */
export const html = escapeHtml;

/** On every page of the console: nothing from elsewhere, no framing, no sniffing, nothing cached. */
export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // Not no-referrer: Chromium then sends `Origin: null` with the forms, which the Origin check refuses.
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

export type ConsoleTab = "servers" | "approvals" | "search" | "activity";

const TABS: readonly { tab: ConsoleTab; label: string; path: string }[] = [
  { tab: "servers", label: "Servers", path: "/" },
  { tab: "approvals", label: "Approvals", path: "/console/approvals" },
  { tab: "search", label: "Search", path: "/console/search" },
  { tab: "activity", label: "Activity", path: "/console/activity" },
];

export interface PageFrame {
  tab: ConsoleTab;
  csrf: string;
  /** What waits for approval: shown on its tab. */
  waiting: number;
  /** A message left by the last action (said once). */
  flash?: { text: string; isError?: boolean } | undefined;
}

export function consolePage(frame: PageFrame, title: string, body: string): string {
  const nav = TABS.map(
    ({ tab, label, path }) =>
      `<a href="${path}"${tab === frame.tab ? ' aria-current="page"' : ""}>${label}${
        tab === "approvals" && frame.waiting > 0
          ? ` <span class="badge" aria-label="${frame.waiting} waiting">${frame.waiting}</span>`
          : ""
      }</a>`,
  ).join("");
  const flash = frame.flash
    ? `<p class="flash${frame.flash.isError ? " flash-error" : ""}" role="status">${html(frame.flash.text)}</p>`
    : "";
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${html(title)} · ${PRODUCT}</title>`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml">',
    '<link rel="stylesheet" href="/console/assets/console.css"><script src="/console/assets/console.js" defer></script>',
    `</head><body><header><span class="brand">${PRODUCT} <small>${html(VERSION)}</small></span><nav aria-label="console">${nav}</nav>`,
    postForm(frame.csrf, "/console/logout", {}, '<button type="submit" class="quiet">Sign out</button>'),
    `</header><main id="main"><h1>${html(title)}</h1>${flash}${body}</main></body></html>`,
  ].join("");
}

/**
 * A form that changes state: a POST with the session's CSRF token and the given hidden fields;
 * `confirm`, a question the console's script asks before it is sent (a removal, a denial).
 */
export function postForm(
  csrf: string,
  action: string,
  fields: Record<string, string>,
  inner: string,
  options: { className?: string; confirm?: string } = {},
): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${html(name)}" value="${html(value)}">`)
    .join("");
  const confirm = options.confirm ? ` data-confirm="${html(options.confirm)}"` : "";
  return `<form method="post" action="${html(action)}" class="${options.className ?? "inline"}"${confirm}><input type="hidden" name="csrf" value="${html(csrf)}">${hidden}${inner}</form>`;
}

/** A page of its own, outside the console's frame (no session yet, or a step away from it). */
export function narrowPage(title: string, inner: string): string {
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${html(title)} · ${PRODUCT}</title>`,
    '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml">',
    '<link rel="stylesheet" href="/console/assets/console.css">',
    `</head><body><main id="main" class="narrow">${inner}</main></body></html>`,
  ].join("");
}

/** The page a visitor without a session sees: how to get in, nothing of the proxy. */
export function signInPage(reason?: string): string {
  return narrowPage(
    "Sign in",
    [
      `<h1>${PRODUCT} console</h1>`,
      reason ? `<p class="flash flash-error" role="alert">${html(reason)}</p>` : "",
      "<p>Open the console from a terminal on this machine:</p><pre><code>mcpproxy console</code></pre>",
      "<p>It opens your browser with a link that signs you in once.</p>",
    ].join(""),
  );
}
