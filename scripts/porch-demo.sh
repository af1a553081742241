#!/usr/bin/env bash
# make demo: Porch's package lifecycle and package variants on plain local
# git repositories. An upstream blueprint repo and three downstream site
# repos, each with a kptbot.yaml variant (package context, labels, one
# injection). No network, no account, no Docker.
set -euo pipefail
KPTBOT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@kptbot.dev GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@kptbot.dev
k() { echo "\$ kptbot $*" | sed "s#$TMP#\$TMP#g"; "$KPTBOT" "$@" | sed "s#$TMP#\$TMP#g"; }

newrepo() { # bare repo with one commit on main
  git init -q --bare -b main "$TMP/$1.git"
  git clone -q "$TMP/$1.git" "$TMP/wt-$1" 2>/dev/null
  (cd "$TMP/wt-$1" && eval "$2" && git add -A && git commit -qm "initial" && git push -q origin HEAD:main)
}

step "An upstream blueprint repository with a namespace package (published as basens/v1)"
newrepo blueprints 'echo "# blueprints" > README.md'
k rpkg init basens --repo "$TMP/blueprints.git" --workspace v1 --description "a tenant namespace"
"$KPTBOT" rpkg pull basens "$TMP/edit-basens" --repo "$TMP/blueprints.git" --workspace v1
cat > "$TMP/edit-basens/namespace.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata:
  name: example
YAML
cat > "$TMP/edit-basens/quota.yaml" <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: default
spec:
  hard:
    cpu: "4"
    memory: 8G
YAML
cat > "$TMP/edit-basens/endpoints.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: endpoints
  annotations:
    kpt.dev/config-injection: required
data:
  api: https://example.invalid
YAML
k rpkg push basens "$TMP/edit-basens" --repo "$TMP/blueprints.git" --workspace v1
k rpkg propose basens --repo "$TMP/blueprints.git" --workspace v1
k rpkg approve basens --repo "$TMP/blueprints.git" --workspace v1

step "Three downstream site repositories, each with a kptbot.yaml PackageVariant"
for site in edge-1 edge-2 edge-3; do
  newrepo "$site" "mkdir -p sites/$site && cat > kptbot.yaml <<YAML
apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: $site}
spec:
  deployment: true
  updatePolicy: draft   # leave each variant's revision a draft: a person proposes and approves it
  injectionSources: [sites/$site/]
---
apiVersion: kptbot.dev/v1alpha1
kind: PackageVariant
metadata: {name: tenant-ns}
spec:
  upstream: {repo: $TMP/blueprints, package: basens, revision: latest}
  downstream: {package: tenant-ns}
  labels: {site: $site}
  packageContext: {data: {site: $site}}
  pipeline:
    mutators:
      - name: namespace
        image: set-namespace:v0.4
        configMap: {namespace: tenant-$site}
  injectors: [{kind: ConfigMap, name: $site-endpoints}]
YAML
cat > sites/$site/endpoints.yaml <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: $site-endpoints
data:
  api: https://api.$site.example.com
YAML"
  echo "  $site: kptbot.yaml + sites/$site/endpoints.yaml"
done
k config validate "$TMP/wt-edge-1/kptbot.yaml"

step "Reconcile (dry run, then for real): each site gets a clone draft"
k variants reconcile --repo "$TMP/edge-1.git" --dry-run
for site in edge-1 edge-2 edge-3; do k variants reconcile --repo "$TMP/$site.git"; done
k variants reconcile --repo "$TMP/edge-1.git"   # idempotent: nothing to do
echo; git -C "$TMP/edge-1.git" show drafts/tenant-ns/tenant-ns-v1:tenant-ns/endpoints.yaml | sed 's/^/  /'

step "Propose and approve the drafts (tags tenant-ns/v1)"
for site in edge-1 edge-2 edge-3; do
  k rpkg propose tenant-ns --repo "$TMP/$site.git" --workspace tenant-ns-v1
  k rpkg approve tenant-ns --repo "$TMP/$site.git" --workspace tenant-ns-v1
done

step "A local edit in edge-2: more memory (new draft, approved as tenant-ns/v2)"
k rpkg copy tenant-ns --repo "$TMP/edge-2.git" --workspace more-memory
"$KPTBOT" rpkg pull tenant-ns "$TMP/edit-edge2" --repo "$TMP/edge-2.git" --workspace more-memory
sed -i 's/memory: 8G/memory: 32G/' "$TMP/edit-edge2/quota.yaml"
k rpkg push tenant-ns "$TMP/edit-edge2" --repo "$TMP/edge-2.git" --workspace more-memory
k rpkg propose tenant-ns --repo "$TMP/edge-2.git" --workspace more-memory
k rpkg approve tenant-ns --repo "$TMP/edge-2.git" --workspace more-memory

step "Upstream publishes basens/v2: more cpu and a NetworkPolicy"
k rpkg copy basens --repo "$TMP/blueprints.git" --workspace v2
"$KPTBOT" rpkg pull basens "$TMP/edit-basens-v2" --repo "$TMP/blueprints.git" --workspace v2
sed -i 's/cpu: "4"/cpu: "8"/' "$TMP/edit-basens-v2/quota.yaml"
cat > "$TMP/edit-basens-v2/netpol.yaml" <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny
spec:
  podSelector: {}
  policyTypes: [Ingress]
YAML
k rpkg push basens "$TMP/edit-basens-v2" --repo "$TMP/blueprints.git" --workspace v2
k rpkg propose basens --repo "$TMP/blueprints.git" --workspace v2
k rpkg approve basens --repo "$TMP/blueprints.git" --workspace v2

step "Reconcile again: update drafts (3-way merge, edge-2's memory edit kept)"
for site in edge-1 edge-2 edge-3; do k variants reconcile --repo "$TMP/$site.git"; done
echo; echo "  edge-2 update draft quota.yaml:"
git -C "$TMP/edge-2.git" show refs/heads/drafts/tenant-ns/tenant-ns-v2:tenant-ns/quota.yaml | sed 's/^/    /'

step "Approve the update drafts"
for site in edge-1 edge-2 edge-3; do
  ws=$(git -C "$TMP/$site.git" for-each-ref --format='%(refname:lstrip=4)' refs/heads/drafts/tenant-ns/)
  k rpkg propose tenant-ns --repo "$TMP/$site.git" --workspace "$ws"
  k rpkg approve tenant-ns --repo "$TMP/$site.git" --workspace "$ws"
done

step "Result: tags per repository"
for r in blueprints edge-1 edge-2 edge-3; do
  printf '  %-10s %s\n' "$r" "$(git -C "$TMP/$r.git" tag | tr '\n' ' ')"
done
k pkg list --repo "$TMP/edge-2.git"
