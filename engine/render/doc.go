// Package render is `kpt fn render`: the Kptfile pipelines of a package
// and its subpackages run by kptbot's own hydrator, built-ins in process
// (streamed file by file where the functions allow, else on the whole
// list), exec and container functions as processes (engine/fnrun), and
// the status.renderStatus kpt records.
package render
