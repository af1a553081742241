package builtins

import (
	"bufio"
	"strings"
)

// sdkFailure is what a catalog function built with the KRM function SDK
// writes to its standard error when it fails.
const sdkFailure = "failed to evaluate function: error: function failure"

// ContainerStderr is the standard error kpt records for a built-in as it
// would for the catalog's container: what the function printed
// (WithStderr) followed, when it failed, by the SDK's failure line, read
// back line by line and joined with newlines, as kpt's container runner
// reads a container's stderr (no trailing newline).
func ContainerStderr(printed string, failed bool) string {
	if failed {
		printed += sdkFailure
	}
	var lines []string
	s := bufio.NewScanner(strings.NewReader(printed))
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return strings.Join(lines, "\n")
}
