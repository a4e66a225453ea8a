import { errorLine } from "../security/html-text.ts";
import type { ToolStats } from "../stats/call-record.ts";
import { html } from "./console-html.ts";

/**
 * The Activity view: calls over time (drawn as inline SVG from the samples below), latency
 * percentiles and failures per server and tool, and a live tail of the log. The log is the proxy's
 * own (its log file, or the service's), whose lines were redacted when they were written; they are
 * redacted again here, as everything the console shows.
 */
export interface Sample {
  at: number;
  calls: number;
  failed: number;
}

export interface ActivitySamples {
  samples(): readonly Sample[];
  /** Takes a sample now (the timer does, every `everyMs`). */
  sample(): void;
  stop(): void;
}

const failedOf = (tool: ToolStats) => tool.isErrors + tool.errors + tool.timeouts;

/** Every `everyMs`, the calls and failures since the last sample (`keep` samples: 30 minutes by default). */
export function startActivitySamples(
  stats: () => readonly ToolStats[],
  options: { everyMs?: number; keep?: number; now?: () => number } = {},
): ActivitySamples {
  const everyMs = options.everyMs ?? 10_000;
  const keep = options.keep ?? 180;
  const now = options.now ?? Date.now;
  const totals = () => {
    let calls = 0;
    let failed = 0;
    for (const tool of stats()) {
      calls += tool.calls;
      failed += failedOf(tool);
    }
    return { calls, failed };
  };
  let last = totals();
  const samples: Sample[] = [];
  const sample = () => {
    const next = totals();
    // A reset of the statistics counts as a fresh start, not as negative calls.
    samples.push({
      at: now(),
      calls: Math.max(0, next.calls - last.calls),
      failed: Math.max(0, next.failed - last.failed),
    });
    if (samples.length > keep) samples.shift();
    last = next;
  };
  const timer = setInterval(sample, everyMs);
  timer.unref?.();
  return { samples: () => samples, sample, stop: () => clearInterval(timer) };
}

export function activityView(
  stats: readonly ToolStats[],
  samples: readonly Sample[],
  hasLog: boolean,
): string {
  const calls = stats.reduce((sum, tool) => sum + tool.calls, 0);
  const failed = stats.reduce((sum, tool) => sum + failedOf(tool), 0);
  const limited = stats.reduce((sum, tool) => sum + tool.limited, 0);
  const figures = [
    ["calls", calls],
    ["failed", failed],
    ["refused by limits", limited],
    ["tools used", stats.filter((tool) => tool.calls > 0).length],
  ]
    .map(([label, value]) => `<div class="figure"><b>${value}</b>${label}</div>`)
    .join("");
  const sorted = [...stats].sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool));
  const rows = sorted
    .map(
      (tool) =>
        `<tr><th scope="row">${html(tool.server)}</th><td>${html(tool.tool)}</td><td class="num">${tool.calls}</td>` +
        `<td class="num">${failedOf(tool)}</td><td class="num">${Math.round(tool.p50Ms)} ms</td><td class="num">${Math.round(tool.p95Ms)} ms</td>` +
        `<td class="error">${tool.lastError ? html(errorLine(tool.lastError)) : ""}</td></tr>`,
    )
    .join("");
  return [
    `<div class="figures" id="figures">${figures}</div>`,
    `<h2>Calls over time</h2>${callsChart(samples)}`,
    '<h2>By tool</h2><div class="table-wrap"><table id="by-tool"><thead><tr><th>server</th><th>tool</th>',
    '<th class="num">calls</th><th class="num">failed</th><th class="num">p50</th><th class="num">p95</th><th>last error</th></tr></thead>',
    `<tbody>${rows || '<tr><td colspan="7">No call yet.</td></tr>'}</tbody></table></div>`,
    "<h2>Log</h2>",
    hasLog
      ? '<pre class="log" id="log" data-refresh="/console/activity/log" tabindex="0" aria-label="log, newest last"></pre>'
      : '<p class="hint">This proxy logs to its terminal (set mcpproxy.logFile, or run it as the service with `mcpproxy start`, to follow its log here).</p>',
  ].join("");
}

/** Bars of calls per sample (failures in red on top), the last 30 minutes; an axis says the scale. */
function callsChart(samples: readonly Sample[]): string {
  const width = 720;
  const height = 160;
  const top = Math.max(1, ...samples.map((sample) => sample.calls));
  const slot = width / Math.max(30, samples.length);
  const bars = samples
    .map((sample, i) => {
      const x = (i * slot).toFixed(1);
      const h = ((sample.calls / top) * (height - 30)).toFixed(1);
      const bad = ((sample.failed / top) * (height - 30)).toFixed(1);
      return (
        `<rect class="bar" x="${x}" y="${(height - 20 - Number(h)).toFixed(1)}" width="${(slot * 0.8).toFixed(1)}" height="${h}"><title>${sample.calls} calls, ${sample.failed} failed</title></rect>` +
        (sample.failed > 0
          ? `<rect class="bar-bad" x="${x}" y="${(height - 20 - Number(bad)).toFixed(1)}" width="${(slot * 0.8).toFixed(1)}" height="${bad}"></rect>`
          : "")
      );
    })
    .join("");
  const label =
    samples.length === 0
      ? "no sample yet: one every 10 s"
      : `${samples.length} samples of 10 s; the highest bar is ${top} calls`;
  return `<svg class="chart" id="calls-chart" viewBox="0 0 ${width} ${height}" preserveAspectRatio="xMinYMid meet" role="img" aria-label="${html(label)}">${bars}<text x="4" y="${height - 4}">${html(label)}</text></svg>`;
}
