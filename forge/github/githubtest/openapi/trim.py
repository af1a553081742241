#!/usr/bin/env python3
"""Trim GitHub's OpenAPI description to the operations kptbot calls.

Usage: trim.py FULL.json > github-trimmed.json
(FULL.json is api.github.com.json from github/rest-api-description.)

Keeps only the (path, method) pairs in OPERATIONS and every component they
reference, transitively, so kin-openapi can validate kptbot's requests
against GitHub's own schemas without loading 13 MB in every test run.
"""
import json
import sys

OPERATIONS = {
    "/repos/{owner}/{repo}": ["get"],
    "/repos/{owner}/{repo}/contents/{path}": ["get"],
    "/repos/{owner}/{repo}/git/trees/{tree_sha}": ["get"],
    "/repos/{owner}/{repo}/git/trees": ["post"],
    "/repos/{owner}/{repo}/git/blobs": ["post"],
    "/repos/{owner}/{repo}/git/commits": ["post"],
    "/repos/{owner}/{repo}/git/matching-refs/{ref}": ["get"],
    "/repos/{owner}/{repo}/tags": ["get"],
    "/repos/{owner}/{repo}/branches": ["get"],
    "/repos/{owner}/{repo}/git/blobs/{file_sha}": ["get"],
    "/repos/{owner}/{repo}/git/ref/{ref}": ["get"],
    "/repos/{owner}/{repo}/git/refs": ["post"],
    "/repos/{owner}/{repo}/git/refs/{ref}": ["patch"],
    "/repos/{owner}/{repo}/git/tags": ["post"],
    "/repos/{owner}/{repo}/git/tags/{tag_sha}": ["get"],
    "/repos/{owner}/{repo}/issues/{issue_number}/labels": ["put", "delete"],
    "/repos/{owner}/{repo}/pulls": ["get", "post"],
    "/repos/{owner}/{repo}/pulls/{pull_number}": ["get", "patch"],
    "/repos/{owner}/{repo}/pulls/{pull_number}/merge": ["put"],
    "/repos/{owner}/{repo}/pulls/{pull_number}/reviews": ["get"],
    "/repos/{owner}/{repo}/issues/{issue_number}/comments": ["get", "post"],
    "/repos/{owner}/{repo}/issues": ["get", "post"],
    "/repos/{owner}/{repo}/issues/{issue_number}": ["patch"],
    "/orgs/{org}/teams/{team_slug}/memberships/{username}": ["get"],
    "/repos/{owner}/{repo}/issues/comments/{comment_id}": ["patch"],
    "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": ["post"],
    "/repos/{owner}/{repo}/check-runs": ["post"],
    "/repos/{owner}/{repo}/commits/{ref}/check-runs": ["get"],
    "/repos/{owner}/{repo}/check-runs/{check_run_id}": ["patch"],
    "/repos/{owner}/{repo}/statuses/{sha}": ["post"],
    "/repos/{owner}/{repo}/collaborators/{username}/permission": ["get"],
    "/repos/{owner}/{repo}/dispatches": ["post"],
    "/installation/repositories": ["get"],
    "/repos/{owner}/{repo}/installation": ["get"],
    "/user/repos": ["get"],
    "/user": ["get"],
    "/app": ["get"],
    "/app/installations": ["get"],
    "/app/installations/{installation_id}/access_tokens": ["post"],
}


def refs(node, out):
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and r.startswith("#/components/"):
            out.add(r)
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    paths = {}
    for path, methods in OPERATIONS.items():
        item = spec["paths"][path]
        kept = {m: item[m] for m in methods}
        if "parameters" in item:
            kept["parameters"] = item["parameters"]
        paths[path] = kept
    todo, seen = set(), set()
    refs(paths, todo)
    components = {}
    while todo:
        r = todo.pop()
        if r in seen:
            continue
        seen.add(r)
        _, _, kind, name = r.split("/", 3)
        node = spec["components"][kind][name]
        components.setdefault(kind, {})[name] = node
        refs(node, todo)
    out = {
        "openapi": spec["openapi"],
        "info": spec["info"],
        "servers": spec["servers"],
        "paths": paths,
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
