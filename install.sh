#!/bin/sh
# mcpproxy installer.
#
#   curl -fsSL https://github.com/mcpproxy/mcpproxy/releases/latest/download/install.sh | sh
#   curl -fsSL …/install.sh | sh -s -- --version 0.1.0 --prefix /usr/local/bin
#
# Downloads the release binary for this machine and the release's SHA256SUMS, refuses to
# install when the checksum does not match, and installs `mcpproxy` to ~/.local/bin (or
# --prefix / MCPPROXY_INSTALL_DIR). It asks for root (sudo) only when that directory is not
# writable. Plain POSIX sh: tested with dash and bash.
set -eu

REPO_URL="https://github.com/mcpproxy/mcpproxy"
BINARY="mcpproxy"

usage() {
  cat <<USAGE
Install mcpproxy, one MCP server in front of many.

Usage: install.sh [options]      (through a pipe: curl -fsSL URL/install.sh | sh -s -- [options])

Options:
  --version X      install release X (default: the latest release)
  --prefix DIR     install into DIR (default: \$MCPPROXY_INSTALL_DIR, else ~/.local/bin)
  --uninstall      remove the installed binary (your config and data in ~/.mcpproxy are kept)
  --from-source [DIR]
                   build from a checkout of the repository (DIR, default: the one this script
                   is in, else the current directory) with \`npm ci && npm run build\`; needs Node 20+
  -h, --help       show this help

Environment:
  MCPPROXY_INSTALL_BASE_URL  where the release's assets and SHA256SUMS are (default: the project's
                             GitHub release); for a mirror or a release directory of your own
  MCPPROXY_INSTALL_DIR       the install directory (--prefix wins)
  MCPPROXY_INSTALL_PLATFORM  os-arch to install instead of this machine's (linux-x64, linux-arm64,
                             linux-x64-musl, linux-arm64-musl, darwin-x64, darwin-arm64)
USAGE
}

say() { printf '%s\n' "$*"; }
fail() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}

version=""
prefix=""
action="install"
source_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
  --version) [ $# -ge 2 ] || fail "--version needs a value, e.g. --version 0.1.0"; version=$2; shift 2 ;;
  --version=*) version=${1#--version=}; shift ;;
  --prefix) [ $# -ge 2 ] || fail "--prefix needs a directory"; prefix=$2; shift 2 ;;
  --prefix=*) prefix=${1#--prefix=}; shift ;;
  --uninstall) action="uninstall"; shift ;;
  --from-source)
    action="source"; shift
    if [ $# -gt 0 ]; then case "$1" in -*) ;; *) source_dir=$1; shift ;; esac; fi ;;
  -h | --help) usage; exit 0 ;;
  *) usage >&2; fail "unknown option: $1" ;;
  esac
done
version=${version#v}

install_dir=${prefix:-${MCPPROXY_INSTALL_DIR:-$HOME/.local/bin}}
case "$install_dir" in
"~"/*) install_dir="$HOME/${install_dir#"~/"}" ;;
esac
target="$install_dir/$BINARY"

# --- helpers -------------------------------------------------------------------------------

# Runs a command, through sudo when the install directory is not ours to write.
as_owner() {
  if [ -n "${use_sudo:-}" ]; then sudo "$@"; else "$@"; fi
}

prepare_dir() {
  use_sudo=""
  parent=$install_dir
  while [ ! -d "$parent" ]; do parent=$(dirname "$parent"); done
  if [ -d "$install_dir" ] && [ -w "$install_dir" ]; then return; fi
  if [ ! -d "$install_dir" ] && [ -w "$parent" ]; then mkdir -p "$install_dir"; return; fi
  if [ "$(id -u)" = 0 ]; then mkdir -p "$install_dir"; return; fi
  command -v sudo >/dev/null 2>&1 ||
    fail "$install_dir is not writable and sudo is not available; choose another directory with --prefix DIR"
  say "$install_dir is not writable by you: asking for root (sudo) to install there."
  use_sudo=1
  sudo mkdir -p "$install_dir"
}

installed_version() {
  if [ -x "$target" ]; then "$target" --version 2>/dev/null | head -n 1 || true; fi
}

# Puts a built or downloaded binary in place: a copy next to the target, then one rename, so a
# running mcpproxy keeps its file and an interrupted install leaves the old one working.
place_binary() {
  before=$(installed_version)
  prepare_dir
  as_owner cp "$1" "$target.new.$$"
  as_owner chmod 755 "$target.new.$$"
  as_owner mv -f "$target.new.$$" "$target"
  after=$("$target" --version 2>/dev/null | head -n 1) || fail "the installed $target does not run on this machine"
  if [ -n "$before" ] && [ "$before" != "$after" ]; then
    say "Upgraded $target: $before -> $after"
  elif [ -n "$before" ]; then
    say "Reinstalled $target: $after"
  else
    say "Installed $target: $after"
  fi
}

path_hint() {
  case ":$PATH:" in
  *":$install_dir:"*) return ;;
  esac
  shell_rc="~/.profile"
  case "${SHELL:-}" in
  */zsh) shell_rc="~/.zshrc" ;;
  */bash) shell_rc="~/.bashrc" ;;
  */fish) say ""; say "$install_dir is not on your PATH. Add it with:"; say "  fish_add_path $install_dir"; return ;;
  esac
  say ""
  say "$install_dir is not on your PATH. Add it (then open a new terminal):"
  say "  echo 'export PATH=\"$install_dir:\$PATH\"' >> $shell_rc"
}

next_steps() {
  path_hint
  say ""
  say "Next: bring in the MCP servers your clients already use, check them, and index their tools:"
  say "  mcpproxy import --dry-run     # shows what it found in Claude Desktop, Claude Code, Cursor, VS Code"
  say "  mcpproxy import && mcpproxy doctor && mcpproxy index"
}

download() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    fail "neither curl nor wget is installed; install one of them and run this again"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    fail "no sha256sum or shasum to check the download with; install coreutils and run this again"
  fi
}

detect_platform() {
  if [ -n "${MCPPROXY_INSTALL_PLATFORM:-}" ]; then
    printf '%s\n' "$MCPPROXY_INSTALL_PLATFORM"
    return
  fi
  os=$(uname -s)
  arch=$(uname -m)
  case "$os" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN* | Windows_NT)
    fail "on Windows, download mcpproxy-VERSION-windows-x64.exe from $REPO_URL/releases and put it on your PATH" ;;
  *) fail "there is no mcpproxy build for $os; build it from a checkout with --from-source" ;;
  esac
  case "$arch" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "there is no mcpproxy build for $os on $arch; build it from a checkout with --from-source" ;;
  esac
  # An x64 shell under Rosetta on Apple silicon: the native binary is the one to run.
  if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
    arch=arm64
  fi
  libc=""
  if [ "$os" = linux ]; then
    if ls /lib/ld-musl-* >/dev/null 2>&1 || (ldd --version 2>&1 | grep -qi musl); then libc="-musl"; fi
  fi
  printf '%s-%s%s\n' "$os" "$arch" "$libc"
}

# --- actions -------------------------------------------------------------------------------

uninstall() {
  if [ ! -e "$target" ]; then
    say "Nothing to remove: $target does not exist."
    return
  fi
  prepare_dir
  as_owner rm -f "$target"
  say "Removed $target."
  say "Your config and index in ~/.mcpproxy were kept; remove that directory to delete them."
}

from_source() {
  dir=$source_dir
  if [ -z "$dir" ]; then
    here=$(CDPATH='' cd -- "$(dirname -- "$0")" 2>/dev/null && pwd || true)
    if [ -n "$here" ] && grep -q '"name": "mcpproxy"' "$here/package.json" 2>/dev/null; then dir=$here; else dir=$(pwd); fi
  fi
  grep -q '"name": "mcpproxy"' "$dir/package.json" 2>/dev/null ||
    fail "$dir is not a checkout of mcpproxy; clone $REPO_URL and run: sh install.sh --from-source DIR"
  command -v npm >/dev/null 2>&1 || fail "building from source needs Node.js 20+ and npm; install them and run this again"
  say "Building mcpproxy in $dir (npm ci && npm run build) ..."
  (cd "$dir" && npm ci --no-audit --no-fund >/dev/null && npm run build >/dev/null) || fail "the build failed in $dir"
  place_binary "$dir/dist/$BINARY"
  next_steps
}

from_release() {
  platform=$(detect_platform)
  if [ -n "${MCPPROXY_INSTALL_BASE_URL:-}" ]; then
    base=${MCPPROXY_INSTALL_BASE_URL%/}
  elif [ -n "$version" ]; then
    base="$REPO_URL/releases/download/v$version"
  else
    base="$REPO_URL/releases/latest/download"
  fi
  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t mcpproxy)
  trap 'rm -rf "$tmp"' EXIT INT TERM
  download "$base/SHA256SUMS" "$tmp/SHA256SUMS" ||
    fail "could not download $base/SHA256SUMS${version:+ (is $version a released version?)}"
  # The asset for this platform, named mcpproxy-VERSION-PLATFORM.tar.gz; its version is the release's.
  line=$(grep -E "^[0-9a-f]{64}  mcpproxy-[^ ]+-$platform\.tar\.gz\$" "$tmp/SHA256SUMS" | head -n 1 || true)
  if [ -z "$line" ]; then
    available=$(sed -n 's/^[0-9a-f]*  mcpproxy-[^-]*-//p' "$tmp/SHA256SUMS" | sed 's/\.tar\.gz$//; s/\.exe$//' | tr '\n' ' ')
    fail "this release has no build for $platform (it has: ${available:-nothing}); build it from a checkout with --from-source"
  fi
  expected=${line%% *}
  asset=${line#*  }
  release_version=${asset#mcpproxy-}
  release_version=${release_version%-"$platform".tar.gz}
  if [ -n "$version" ] && [ "$release_version" != "$version" ]; then
    fail "$base has mcpproxy $release_version, not $version"
  fi
  say "Downloading $asset ..."
  download "$base/$asset" "$tmp/$asset" || fail "could not download $base/$asset"
  actual=$(sha256_of "$tmp/$asset")
  if [ "$actual" != "$expected" ]; then
    fail "checksum mismatch for $asset: expected $expected, got $actual. The download is corrupt or was tampered with; nothing was installed."
  fi
  mkdir "$tmp/unpacked"
  tar -xzf "$tmp/$asset" -C "$tmp/unpacked" || fail "could not unpack $asset"
  [ -f "$tmp/unpacked/$BINARY" ] || fail "$asset holds no $BINARY binary"
  place_binary "$tmp/unpacked/$BINARY"
  next_steps
}

case "$action" in
install) from_release ;;
uninstall) uninstall ;;
source) from_source ;;
esac
