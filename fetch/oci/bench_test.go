package oci

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/ocitest"
)

// BenchmarkFetch resolves a tag and unpacks a 1,000-resource package from
// the in-memory registry (manifest GET, layer GET, digest checks, unpack).
func BenchmarkFetch(b *testing.B) {
	files := map[string][]byte{"Kptfile": []byte(ocitest.Kptfile("bp"))}
	for i := 0; i < 1000; i++ {
		files[fmt.Sprintf("cm/%04d.yaml", i)] = []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  v: %q\n", i, strings.Repeat("x", 900)))
	}
	host := ocitest.MemRegistry(b)
	c := New(Options{})
	ctx := context.Background()
	if _, err := c.Push(ctx, "oci://"+host+"/bp", "/pkg", "v1", files, PushOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, _, err := c.Fetch(ctx, "oci://"+host+"/bp", "/pkg", "v1")
		if err != nil || len(got) != len(files) {
			b.Fatalf("%d files, %v", len(got), err)
		}
	}
}
