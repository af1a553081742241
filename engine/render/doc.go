// Package render is `kpt fn render`: the Kptfile pipelines of a package
// and its subpackages run in-process (streamed file by file where the
// functions allow, else on the whole list) or, for container and exec
// functions, through kpt's renderer, and the status.renderStatus kpt
// records.
package render
