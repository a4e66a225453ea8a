#!/usr/bin/env bun
import { formatOverheadReport, measureCallOverhead } from "./call-overhead.ts";
import { formatConfigReloadReport, measureConfigReload } from "./config-reload-bench.ts";
import { evalSetPath, missingEvalSet } from "./eval-catalog.ts";
import { formatLimitsReport, runLimitsBench } from "./http-limits-bench.ts";
import { formatLoadReport, runLoadBench } from "./load-bench.ts";
import { formatPoisoningReport, runPoisoningBench } from "./poisoning-bench.ts";
import { formatRelayReport, measureRelay } from "./relay-bench.ts";
import { formatEvalReport, runRetrievalEval } from "./retrieval-eval.ts";
import { formatRoutingReport, runRoutingBench } from "./routing-bench.ts";
import { formatScaleReport, runScaleBench } from "./scale-bench.ts";
import { formatServerScaleReport, runServerScaleBench } from "./server-scale-bench.ts";
import { formatStartupReport, measureStartup } from "./startup-bench.ts";
import { formatTransportReport, measureTransportOverhead } from "./transport-overhead.ts";
import { formatUpstreamBoundsReport, runUpstreamBoundsBench } from "./upstream-bounds-bench.ts";

const evalFile = evalSetPath();
if (evalFile) {
  process.stdout.write(`${formatEvalReport(await runRetrievalEval(evalFile))}\n\n`);
  process.stdout.write(`${formatScaleReport(await runScaleBench(), 10_000)}\n\n`);
  process.stdout.write(
    `${formatServerScaleReport(await runServerScaleBench([2_000, 20_000], 300), 300)}\n\n`,
  );
  process.stdout.write(`${formatRoutingReport(await runRoutingBench(evalFile))}\n\n`);
} else {
  process.stdout.write(`(retrieval eval, scale and routing benches skipped: ${missingEvalSet()})\n\n`);
}
process.stdout.write(`${formatPoisoningReport(runPoisoningBench())}\n\n`);
process.stdout.write(`${formatOverheadReport(await measureCallOverhead())}\n\n`);
process.stdout.write(`${formatStartupReport(await measureStartup({ evalSet: evalFile }))}\n\n`);
process.stdout.write(`${formatTransportReport(await measureTransportOverhead(), 1000)}\n\n`);
process.stdout.write(`${formatRelayReport(await measureRelay())}\n\n`);
process.stdout.write(`${formatConfigReloadReport(await measureConfigReload())}\n\n`);
process.stdout.write(`${formatLimitsReport(await runLimitsBench())}\n\n`);
process.stdout.write(`${formatUpstreamBoundsReport(await runUpstreamBoundsBench())}\n\n`);
process.stdout.write(`${formatLoadReport(await runLoadBench())}\n`);
