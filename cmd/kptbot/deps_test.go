package main

import (
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// binaryDeps lists the packages the kptbot binary links (go list -deps,
// with the build tags of GOFLAGS, as the Makefile builds it); once per
// test binary, the listing takes seconds.
var binaryDeps = sync.OnceValues(func() ([]string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
})

// assertNotLinked fails for every package of the binary that is one of
// banned or under it; reason says why it must stay out.
func assertNotLinked(t *testing.T, banned map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go tool is needed to list the binary's packages")
	}
	deps, err := binaryDeps()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed only %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		for b, reason := range banned {
			if p == b || strings.HasPrefix(p, b+"/") {
				t.Errorf("the kptbot binary links %s: %s", p, reason)
			}
		}
	}
}

// TestBinaryLinksNoKubernetesClient: the kptbot binary links neither
// client-go nor kubectl (nor kpt's renderer, kptops, which brought them):
// their package initialisation (API schemes, the scale client, OpenAPI
// models) was about half of every CLI call's start-up, and kptbot talks
// to no cluster. Tests may still import them to compare with kpt.
func TestBinaryLinksNoKubernetesClient(t *testing.T) {
	t.Parallel()
	const why = "kptbot talks to no cluster, and its package initialisation is paid by every CLI call"
	assertNotLinked(t, map[string]string{
		"k8s.io/client-go":                           why,
		"k8s.io/kubectl":                             why,
		"github.com/kptdev/kpt/pkg/lib/kptops":       why,
		"github.com/kptdev/kpt/internal/util/render": why,
	})
}

// TestBinaryLinksNoUnusedServerCodecs: gin is pinned to v1.10 (go.mod),
// whose router and JSON rendering are all the webhook server uses; gin
// v1.11 and later link HTTP/3 (quic-go) and BSON (the MongoDB driver),
// and v1.12 goccy/go-yaml, whatever the program uses: about 40 packages,
// their init and 1 MB of binary every kptbot process paid. Upgrading gin
// brings them back; this test says so.
func TestBinaryLinksNoUnusedServerCodecs(t *testing.T) {
	t.Parallel()
	const why = "linked by gin v1.11+ for features the webhook server never uses (keep gin at v1.10, see go.mod)"
	assertNotLinked(t, map[string]string{
		"github.com/quic-go/quic-go":  why,
		"github.com/quic-go/qpack":    why,
		"go.mongodb.org/mongo-driver": why,
		"github.com/goccy/go-yaml":    why,
	})
}

// TestBinaryLinksNoOpenAPIValidation: the kptbot binary links neither
// kyaml's fn/framework nor the kube-openapi validators and formats
// (validate, strfmt, govalidator) that only framework needed, nor kpt's
// fnresult and fn packages that brought framework in: their package
// initialisation (format registries, regular expressions) was the largest
// single share of every command's start-up, for result types that
// engine/fnresults provides. Tests may still import them to compare.
func TestBinaryLinksNoOpenAPIValidation(t *testing.T) {
	t.Parallel()
	const why = "function results are engine/fnresults' types; this package's init is paid by every CLI call"
	assertNotLinked(t, map[string]string{
		"sigs.k8s.io/kustomize/kyaml/fn/framework":                 why,
		"k8s.io/kube-openapi/pkg/validation/validate":              why,
		"k8s.io/kube-openapi/pkg/validation/strfmt":                why,
		"k8s.io/kube-openapi/pkg/internal/third_party/govalidator": why,
		"github.com/kptdev/kpt/pkg/api/fnresult":                   why,
		"github.com/kptdev/kpt/pkg/fn":                             why,
	})
}
