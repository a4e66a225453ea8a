import type { ResolvedConfig } from "../config/load-config.ts";
import { describeError, isProxyError } from "../errors.ts";
import { createEmbedder } from "../index/embedders/create-embedder.ts";
import { createLogger } from "../log.ts";
import { loadPlugins } from "../plugins/load-plugins.ts";
import { type Findings, problemText } from "./finding.ts";

/**
 * `doctor`'s checks of what serve loads besides its servers: the embedder the search settings name
 * (created and closed again: its model found and loaded, or BM25 alone) and the plugins (loaded
 * strictly, so one that would fail at serve's start fails here, named).
 */

export async function checkEmbedder(config: ResolvedConfig, findings: Findings): Promise<void> {
  // In `auto` search the encoder serves only the requests BM25 answers weakly; it is loaded here
  // all the same, so that one that cannot load is found now rather than at such a request.
  const isAuto = config.search.mode === "auto";
  const subject = isAuto ? `${config.embedder} (auto search)` : config.embedder;
  try {
    const embedder = await createEmbedder(config);
    await embedder?.close?.();
    const what = embedder
      ? `${embedder.id}, ${embedder.dimensions} dimensions`
      : "BM25 only (no model needed)";
    findings.push({
      area: "embedder",
      subject,
      status: "ok",
      detail: isAuto ? `${what}; loaded only for the requests BM25 answers weakly` : what,
    });
  } catch (error) {
    findings.push({
      area: "embedder",
      subject,
      status: "fail",
      detail: describeError(error),
      fix: isProxyError(error) ? error.details.join("; ") || "see the message" : "see the message",
    });
  }
}

export async function checkPlugins(config: ResolvedConfig, findings: Findings): Promise<void> {
  if (config.plugins.length === 0) {
    findings.push({ area: "plugins", subject: "plugins", status: "info", detail: "none configured" });
    return;
  }
  try {
    const loaded = await loadPlugins(config.plugins, {
      strict: true,
      logger: createLogger({ level: "error" }),
    });
    findings.push({
      area: "plugins",
      subject: "plugins",
      status: "ok",
      detail: `${loaded.length} loaded: ${loaded.map((entry) => entry.plugin.name).join(", ")}`,
    });
  } catch (error) {
    findings.push({
      area: "plugins",
      subject: "plugins",
      status: "fail",
      detail: problemText(error),
      fix: "fix or remove the plugin named above",
    });
  }
}
