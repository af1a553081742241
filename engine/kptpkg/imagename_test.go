package kptpkg

import (
	"strings"
	"testing"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// imageNames covers each rule of kpt's image expression from both sides.
var imageNames = []string{
	"", "a", "A", "set-namespace", "set-namespace:v0.4.5",
	"ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.5",
	"gcr.io/kpt-fn/apply-setters:v0.2",
	"localhost:5000/fn", "localhost:5000/fn:v1", "localhost:/fn", "localhost:5a/fn", "a:1:2/fn",
	"my-registry.example.com:443/team/fn@sha256:" + strings.Repeat("a", 64),
	"fn@sha256:" + strings.Repeat("a", 63), "fn@sha256:" + strings.Repeat("A", 65),
	"fn:sha256:" + strings.Repeat("0", 64), "fn@v1", "fn@", "fn:", ":v1", "@v1",
	"fn:" + strings.Repeat("v", 128), "fn:" + strings.Repeat("v", 129), "fn:.v1", "fn:_v1", "fn:-v1", "fn:v1.-_",
	"a.b", "a..b", "a_b", "a__b", "a___b", "a-b", "a---b", "a-_b", "a._b", "a-", "-a", "a_", ".a",
	"Upper/fn", "upper/Fn", "-host/fn", "host-/fn", "ho-st/fn", "h.-x/fn", "h..x/fn", "h.x./fn",
	"a/b/c/d", "a//b", "a/", "/a", "a/b:c/d", "a/b@c", "a b", "a\n", "fn:v1\n", "é/fn", "fn:v\xff",
	"example.com/fn:1.0@sha256:" + strings.Repeat("b", 64),
}

func kptAccepts(name string) bool { return kptfilev1.ValidateFunctionImageURL(name) == nil }

func TestValidImageNameMatchesKpt(t *testing.T) {
	t.Parallel()
	for _, name := range imageNames {
		if got, want := ValidImageName(name), kptAccepts(name); got != want {
			t.Errorf("ValidImageName(%q) = %v, kpt says %v", name, got, want)
		}
	}
}

func FuzzValidImageName(f *testing.F) {
	for _, name := range imageNames {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidImageName(name), kptAccepts(name); got != want {
			t.Errorf("ValidImageName(%q) = %v, kpt says %v", name, got, want)
		}
	})
}
