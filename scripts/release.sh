#!/usr/bin/env bash
# Build the release assets the GitHub Action's installer downloads:
# dist/kptbot_<version>_<os>_<arch>.tar.gz (the static binary at the
# archive's root) and dist/checksums.txt (sha256sum format).
# Usage: scripts/release.sh vX.Y.Z   (PLATFORMS="linux/amd64 ..." to narrow,
# DIST=dir to write elsewhere than dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: scripts/release.sh vX.Y.Z}"
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "version $version: want vX.Y.Z[-suffix]" >&2; exit 1; }
platforms="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
export GOTOOLCHAIN=local GONOSUMDB=github.com/kptdev GOFLAGS=-buildvcs=false CGO_ENABLED=0
dist="${DIST:-dist}"
rm -rf "$dist" && mkdir -p "$dist"
for p in $platforms; do
  os="${p%/*}" arch="${p#*/}"
  work="$(mktemp -d)"
  GOOS="$os" GOARCH="$arch" go build -tags nomsgpack \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date" \
    -o "$work/kptbot" ./cmd/kptbot
  tar -C "$work" -czf "$dist/kptbot_${version#v}_${os}_${arch}.tar.gz" kptbot
  rm -rf "$work"
done
(cd "$dist" && sha256sum kptbot_*.tar.gz > checksums.txt)
ls -l "$dist"
