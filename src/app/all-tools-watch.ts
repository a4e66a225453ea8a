import { describeError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import type { AllTools } from "../routing/all-tools.ts";
import type { ChangeNotifier } from "../server/federation/change-feed.ts";

/**
 * `--routing all`: looks at the catalog every `intervalMs` and tells every client when the list
 * changed (list_changed to 2025 sessions, the tools event to 2026 listen streams). A look rather
 * than an event, because an approval comes from another process (`mcpproxy approve`), like the
 * federated lists' (list-watch.ts). Returns the function that stops.
 */
const ALL_TOOLS_WATCH_MS = 1_000;

export function watchAllTools(
  allTools: AllTools,
  catalog: ToolCatalog,
  changes: Pick<ChangeNotifier, "toolsChanged">,
  logger: Logger,
  intervalMs = ALL_TOOLS_WATCH_MS,
): () => void {
  const look = () => {
    try {
      if (allTools.check(catalog)) {
        logger.debug("the tool list of all routing changed; telling the clients");
        changes.toolsChanged();
      }
    } catch (error) {
      logger.debug(`all-tools watch: ${describeError(error)}`);
    }
  };
  look();
  const timer = setInterval(look, intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
