// Package kptpkg is a kpt package as files: trees of files in memory and
// on disk, the Kptfile (strict decoding, upstream and lock, the render
// status kpt records), and reading and writing KRM resource files with
// the layout kpt's readers and writers give them. The other engine
// packages build on it.
package kptpkg
