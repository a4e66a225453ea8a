/**
 * The Homebrew formula for the tap (`Formula/mcpproxy.rb`), rendered from a release's assets:
 * one URL and sha256 per macOS and Linux architecture, the binary installed as `mcpproxy`, and
 * a test that runs `mcpproxy --version`.
 */
export interface FormulaAsset {
  url: string;
  sha256: string;
}

export interface FormulaInput {
  version: string;
  description: string;
  homepage: string;
  license: string;
  /** Keyed by release target: darwin-arm64, darwin-x64, linux-arm64, linux-x64. */
  assets: Record<"darwin-arm64" | "darwin-x64" | "linux-arm64" | "linux-x64", FormulaAsset>;
}

export function renderFormula(input: FormulaInput): string {
  const q = (text: string) => JSON.stringify(text); // a Ruby double-quoted string of plain text
  const block = (indent: string, asset: FormulaAsset) =>
    `${indent}url ${q(asset.url)}\n${indent}sha256 ${q(asset.sha256)}\n`;
  const os = (name: "macos" | "linux", prefix: "darwin" | "linux") =>
    `  on_${name} do\n` +
    `    on_arm do\n${block("      ", input.assets[`${prefix}-arm64`])}    end\n` +
    `    on_intel do\n${block("      ", input.assets[`${prefix}-x64`])}    end\n` +
    "  end\n";
  return (
    `# Rendered by scripts/release.ts for mcpproxy ${input.version}: edit the script, not this file.\n` +
    "class Mcpproxy < Formula\n" +
    `  desc ${q(input.description)}\n` +
    `  homepage ${q(input.homepage)}\n` +
    `  version ${q(input.version)}\n` +
    `  license ${q(input.license)}\n\n` +
    `${os("macos", "darwin")}\n${os("linux", "linux")}\n` +
    "  def install\n" +
    '    bin.install "mcpproxy"\n' +
    "  end\n\n" +
    "  test do\n" +
    '    assert_match version.to_s, shell_output("#{bin}/mcpproxy --version")\n' +
    "  end\n" +
    "end\n"
  );
}
