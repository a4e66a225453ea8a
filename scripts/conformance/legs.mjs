// Helpers of scripts/conformance.sh, run with the suite's Node (its `yaml` package comes from the
// suite's install, named by CONFORMANCE_SUITE_DIR):
//   node legs.mjs baseline FILE SECTION OUT   writes section SECTION of expected-failures.yml FILE
//                                            to OUT in the suite's baseline format ({server, client})
//   node legs.mjs tally OUTDIR PREFIX         reads scored scenario names on stdin and prints
//                                            "PASSED TOTAL FAILING…" from OUTDIR's checks.json files
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";

const LEGS = ["normal", "passthrough", "client"];
const ERAS = ["2026-07-28", "2025-11-25"];

function baseline(file, section, out) {
  const YAML = createRequire(join(process.env.CONFORMANCE_SUITE_DIR, "package.json"))("yaml");
  const doc = YAML.parse(readFileSync(file, "utf8")) ?? {};
  const known = LEGS.flatMap((leg) => ERAS.map((era) => `${leg}-${era}`));
  const unknown = Object.keys(doc).filter((key) => !known.includes(key));
  // A misspelt section would silently make its leg strict; say so instead.
  if (unknown.length > 0)
    throw new Error(`${file}: unknown section(s) ${unknown.join(", ")}; known: ${known.join(", ")}`);
  writeFileSync(out, JSON.stringify(doc[section] ?? {}));
}

function checksFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return checksFiles(path);
    return entry.name === "checks.json" ? [path] : [];
  });
}

/** A scenario passed when it left a checks.json with no FAILURE or WARNING (the baseline's rule). */
function tally(outDir, prefix) {
  const files = checksFiles(outDir);
  const names = readFileSync(0, "utf8").split("\n").filter(Boolean);
  const failing = names.filter((name) => {
    // The suite names each scenario's directory PREFIX + name + "-" + an ISO timestamp.
    const file = files.find((path) => {
      const dir = relative(outDir, dirname(path));
      const head = `${prefix}${name}-`;
      return dir.startsWith(head) && /^\d{4}-\d\d-\d\dT/.test(dir.slice(head.length));
    });
    if (!file) return true;
    return JSON.parse(readFileSync(file, "utf8")).some((check) =>
      ["FAILURE", "WARNING"].includes(check.status),
    );
  });
  process.stdout.write(`${[names.length - failing.length, names.length, ...failing].join(" ")}\n`);
}

const [command, ...args] = process.argv.slice(2);
if (command === "baseline") baseline(...args);
else if (command === "tally") tally(...args);
else throw new Error(`usage: legs.mjs baseline FILE SECTION OUT | tally OUTDIR PREFIX`);
