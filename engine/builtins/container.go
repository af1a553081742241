package builtins

import (
	"bufio"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
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

// sortLikeSDK orders items as the KRM function SDK writes a function's
// output: by "apiVersion kind namespace name", with the SDK's own sort
// (sort.Sort), so that kpt fn eval -o stdout or unwrap and a chain of
// evals list resources in the order the catalog's images leave them. A
// package written back is unaffected: files follow the path and index
// annotations.
func sortLikeSDK(items []*yaml.RNode) {
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.GetApiVersion() + " " + it.GetKind() + " " + it.GetNamespace() + " " + it.GetName()
	}
	sort.Sort(sdkOrder{items, keys})
}

type sdkOrder struct {
	items []*yaml.RNode
	keys  []string
}

func (o sdkOrder) Len() int           { return len(o.items) }
func (o sdkOrder) Less(i, j int) bool { return o.keys[i] < o.keys[j] }
func (o sdkOrder) Swap(i, j int) {
	o.items[i], o.items[j] = o.items[j], o.items[i]
	o.keys[i], o.keys[j] = o.keys[j], o.keys[i]
}
