#!/usr/bin/env bash
# Installs kptbot for the GitHub Action (action.yml) and prints the binary's
# path as the step output `bin`.
#
# - The action used at a release tag (uses: kptbot/kptbot@v1.2.3): the
#   release's binary for this runner, checked against the release's
#   checksums.txt, kept in the runner's tool cache for later jobs. This is
#   the fast path: one ~15 MB download, no compiler.
# - Any other ref (a major tag such as v1, a branch such as main, a commit,
#   or a local `uses: ./`): built from the action's own source with Go,
#   which action.yml sets up first (actions/setup-go; a minute or two).
#
# `action-install.sh --plan` only decides: it writes source=true (build from
# source: action.yml then sets up Go) or source=false to GITHUB_OUTPUT.
#
# Inputs (environment): ACTION_REF, ACTION_PATH, and the runner's RUNNER_TEMP,
# RUNNER_TOOL_CACHE, GITHUB_SERVER_URL, GITHUB_OUTPUT. KPTBOT_RELEASES_REPO
# overrides where releases come from (a mirror on GitHub Enterprise Server).
set -euo pipefail

ref="${ACTION_REF:-}"
src="${ACTION_PATH:?ACTION_PATH is not set}"
tmp="${RUNNER_TEMP:-/tmp}/kptbot-install"
mkdir -p "$tmp"

release=false
[[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] && release=true
if [[ "${1:-}" == "--plan" ]]; then
  if $release; then echo "source=false"; else echo "source=true"; fi >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
  exit 0
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "::error title=kptbot::unsupported runner OS $(uname -s): use a Linux or macOS runner"; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "::error title=kptbot::unsupported runner architecture $(uname -m)"; exit 1 ;;
esac

if $release; then
  dir="${RUNNER_TOOL_CACHE:-$tmp}/kptbot/${ref#v}/$arch"
  if [[ ! -x "$dir/kptbot" ]]; then
    repo="${KPTBOT_RELEASES_REPO:-kptbot/kptbot}"
    base="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/$ref"
    tarball="kptbot_${ref#v}_${os}_${arch}.tar.gz"
    curl -fsSL --retry 3 -o "$tmp/$tarball" "$base/$tarball"
    curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/checksums.txt"
    sha256check="sha256sum -c --status -"
    command -v sha256sum >/dev/null 2>&1 || sha256check="shasum -a 256 -c --status -" # macOS
    (cd "$tmp" && grep -E "  $tarball\$" checksums.txt | $sha256check) ||
      { echo "::error title=kptbot::$tarball does not match the release's checksums.txt"; exit 1; }
    mkdir -p "$dir"
    tar -xzf "$tmp/$tarball" -C "$dir" kptbot
  fi
  bin="$dir/kptbot"
else
  if ! command -v go >/dev/null 2>&1; then
    echo "::error title=kptbot::the action is used at ${ref:-a local path}, not a release tag (vX.Y.Z), so it is built from source, but Go is not installed (action.yml's actions/setup-go step should have installed it)"
    exit 1
  fi
  bin="$tmp/kptbot"
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false GONOSUMDB=github.com/kptdev \
    go build -tags nomsgpack -ldflags "-X main.version=${ref:-dev}" -o "$bin" ./cmd/kptbot)
fi

"$bin" version
echo "bin=$bin" >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
