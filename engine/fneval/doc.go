// Package fneval is `kpt fn eval`: one function run on a package or a
// resource stream (in-process, as a container or as an executable), its
// image tag resolved as kpt resolves it, and `--save` into the Kptfile.
package fneval
