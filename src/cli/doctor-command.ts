import { watchStopSignals } from "../app/stop-signals.ts";
import { type Finding, runDoctor } from "../doctor/doctor-checks.ts";
import { COMMON_OPTIONS, type Command } from "./command.ts";

const MARK = { ok: "ok  ", warn: "warn", fail: "FAIL", info: "--  " } as const;

export const doctorCommand: Command = {
  name: "doctor",
  summary:
    "Check the set-up and say what to fix: which config file is used and why, the data dir and its index, " +
    "every enabled server (started for real: time to initialize, tool count, why it fails), the embedder, " +
    "the plugins, and whether your MCP clients point at mcpproxy. Exits 1 when something is broken.",
  usage: "mcpproxy doctor [--json] [--config FILE] [--data-dir DIR]",
  options: {
    json: { type: "boolean", help: "--json             print {ok, findings: [...]} instead of lines" },
    ...COMMON_OPTIONS,
  },
  async run(values) {
    // Doctor starts every server: Ctrl-C or SIGTERM stops them (and their helpers) before we exit.
    const stop = watchStopSignals();
    let findings: Finding[];
    try {
      findings = await runDoctor({
        configFlag: values.config as string | undefined,
        dataDirFlag: values["data-dir"] as string | undefined,
        env: process.env,
        cwd: process.cwd(),
        signal: stop.signal,
      });
    } finally {
      stop.dispose();
    }
    if (stop.received) {
      process.stderr.write(
        `mcpproxy: doctor stopped by ${stop.received}; the servers it started are stopped.\n`,
      );
      return stop.exitCode();
    }
    const failures = findings.filter((finding) => finding.status === "fail").length;
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ ok: failures === 0, findings }, null, 2)}\n`);
      return failures === 0 ? 0 : 1;
    }
    const width = Math.min(24, Math.max(...findings.map((f) => `${f.area} ${f.subject}`.length)));
    const lines = findings.map((finding) => {
      const what = `${finding.area} ${finding.subject}`;
      const fix = finding.fix && finding.status !== "ok" ? `\n${" ".repeat(width + 9)}-> ${finding.fix}` : "";
      return `  ${MARK[finding.status]}  ${what.padEnd(width)}  ${finding.detail}${fix}`;
    });
    const warnings = findings.filter((finding) => finding.status === "warn").length;
    lines.push(
      "",
      failures > 0
        ? `${failures} problem(s) to fix${warnings > 0 ? `, ${warnings} warning(s)` : ""}.`
        : warnings > 0
          ? `Nothing broken; ${warnings} warning(s).`
          : "Everything checked is fine.",
    );
    process.stdout.write(`${lines.join("\n")}\n`);
    return failures === 0 ? 0 : 1;
  },
};
