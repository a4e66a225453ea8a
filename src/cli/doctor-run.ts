import { watchStopSignals } from "../app/stop-signals.ts";
import { runDoctor } from "../doctor/doctor-checks.ts";
import type { Finding } from "../doctor/finding.ts";
import type { CommandValues } from "./command.ts";

const MARK = { ok: "ok  ", warn: "warn", fail: "FAIL", info: "--  " } as const;

/** `mcpproxy doctor`: what it does once its flags are parsed (its flags and help: doctor-command.ts). */
export async function runDoctorCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const json = Boolean(values.json);
  // Doctor starts every server: Ctrl-C or SIGTERM stops them (and their helpers) before we exit.
  const stop = watchStopSignals();
  let findings: Finding[];
  try {
    // Each line as soon as its check is done: a server that takes its whole timeoutMs to fail
    // held back every other line (30-120 s of silence).
    findings = await runDoctor({
      configFlag: values.config as string | undefined,
      dataDirFlag: values["data-dir"] as string | undefined,
      storeFlag: values.store as string | undefined,
      env: process.env,
      cwd: process.cwd(),
      signal: stop.signal,
      ...(json ? {} : { onFinding: (finding) => process.stdout.write(`${line(finding)}\n`) }),
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
  const failures = findings.filter((finding) => finding.status === "fail");
  if (json) {
    process.stdout.write(`${JSON.stringify({ ok: failures.length === 0, findings }, null, 2)}\n`);
    return failures.length === 0 ? 0 : 1;
  }
  // The summary names what to fix in a stable order (config order for servers), whatever
  // order the lines above came in.
  const warnings = findings.filter((finding) => finding.status === "warn");
  const named = (list: Finding[]) => list.map((finding) => `${finding.area} ${finding.subject}`).join(", ");
  process.stdout.write(
    `\n${
      failures.length > 0
        ? `${failures.length} problem(s) to fix: ${named(failures)}` +
          (warnings.length > 0 ? `; ${warnings.length} warning(s): ${named(warnings)}.` : ".")
        : warnings.length > 0
          ? `Nothing broken; ${warnings.length} warning(s): ${named(warnings)}.`
          : "Everything checked is fine."
    }\n`,
  );
  return failures.length === 0 ? 0 : 1;
}

/** The width of the "area subject" column; longer subjects push their detail right. */
const SUBJECT_WIDTH = 24;

function line(finding: Finding): string {
  const what = `${finding.area} ${finding.subject}`;
  const fix =
    finding.fix && finding.status !== "ok" ? `\n${" ".repeat(SUBJECT_WIDTH + 9)}-> ${finding.fix}` : "";
  return `  ${MARK[finding.status]}  ${what.padEnd(SUBJECT_WIDTH)}  ${finding.detail}${fix}`;
}
