// Package packaging has no code of its own: its tests check how kptbot is
// shipped — the Dockerfile, the deploy/ kpt package that runs the server on
// Kubernetes, and the GitHub App manifest — against the code they package,
// so that none of them can drift from it unnoticed.
package packaging
