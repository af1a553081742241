// Package engine holds kptbot's package operations: get, update, diff,
// init and clean, built on kpt's own library so the result is what kpt
// and Porch users expect. Nothing here talks to a forge; upstream trees
// arrive through the small Fetcher interface. It builds on kptpkg (a
// package's files and Kptfile), pkgmerge (the 3-way merge), render
// (`fn render`) and fneval (`fn eval`).
package engine
