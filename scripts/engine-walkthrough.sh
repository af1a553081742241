#!/usr/bin/env bash
# The engine walkthrough `make demo` runs: get a package from a local git
# repo, edit it, update it to a newer tag keeping the edit, diff it and
# render it with built-in functions. No network, no Docker, no account.
set -euo pipefail
KPTBOT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@kptbot.dev GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@kptbot.dev

step "An upstream blueprint repo (Porch's test blueprints: tags basens/v1..v4)"
git clone -q --bare "$ROOT/testdata/test-blueprints.bundle" "$TMP/blueprints.git"
git -C "$TMP/blueprints.git" tag | sed 's/^/  /'

step "kptbot pkg get file://$TMP/blueprints.git/basens@v2 team-a"
mkdir "$TMP/deploy" && cd "$TMP/deploy" && git init -q
"$KPTBOT" pkg get "file://$TMP/blueprints.git/basens@v2" team-a
git add -A && git commit -qm "get basens v2"

step "Local edits: a label, a pod quota, and 64G of memory"
sed -i 's/memory: 40G/memory: 64G/; s/^  hard:$/  hard:\n    pods: "20"/' team-a/resourcequota.yaml
sed -i 's/^  name: example$/  name: example\n  labels:\n    team: a/' team-a/namespace.yaml
git commit -qam "team-a customizations"
git show --stat --format='  %s' HEAD | sed 's/^/  /'

step "kptbot pkg update team-a@v3   (upstream raised cpu and memory: memory is a conflict, reported)"
"$KPTBOT" pkg update team-a@v3
git add -A && git commit -qm "update to v3"

step "kptbot pkg update team-a@v4   (upstream added Kptfile labels)"
"$KPTBOT" pkg update team-a@v4 -o json
git add -A && git commit -qm "update to v4"

step "kptbot pkg diff team-a   (local changes relative to upstream basens/v4)"
"$KPTBOT" pkg diff team-a

step "Add a pipeline and kptbot fn render team-a   (built-in functions, no Docker)"
cat >> team-a/Kptfile <<'YAML'
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
      configMap:
        namespace: team-a
    - image: set-labels:v0.2.0
      configMap:
        tenant: team-a
YAML
"$KPTBOT" fn render team-a
cat team-a/resourcequota.yaml

step "Done: the package is at basens/v4; the label and pod quota were kept, the memory conflict was reported"
grep -A3 'upstreamLock' team-a/Kptfile | sed 's/^/  /'
