// Package archcheck holds the repository's layout rules as tests, so a
// change that breaks one fails `go test ./...`: no interface declared
// outside tests has more than MaxInterfaceMethods methods (embedded ones
// counted), because a consumer should depend on the few methods it uses;
// no package has more than MaxPackageLines non-test lines.
package archcheck

// MaxInterfaceMethods is the most methods an interface may have.
const MaxInterfaceMethods = 6
