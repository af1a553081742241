package archive

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/ocitest"
)

// BenchmarkTarGz unpacks a 1,000-resource package archive (about 1 MiB)
// with every safety check on.
func BenchmarkTarGz(b *testing.B) {
	entries := []ocitest.Entry{{Name: "bp-1.0/Kptfile", Body: ocitest.Kptfile("bp")}}
	for i := 0; i < 1000; i++ {
		body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  v: %q\n", i, strings.Repeat("x", 900))
		entries = append(entries, ocitest.Entry{Name: fmt.Sprintf("bp-1.0/cm/%04d.yaml", i), Body: body})
	}
	tgz := ocitest.TarGz(b, entries...)
	b.SetBytes(int64(len(tgz)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		files, err := TarGz(bytes.NewReader(tgz), Limits{})
		if err != nil || len(files) != 1001 {
			b.Fatalf("%d files, %v", len(files), err)
		}
	}
}
