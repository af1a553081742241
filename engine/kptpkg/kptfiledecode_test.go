package kptpkg

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/kptdev/kpt/pkg/kptfile/kptfileutil"
)

// kptfileSamples cover what decodeV1 takes and what it leaves to kpt's
// decode (other versions and kinds, aliases, merge keys, invalid YAML).
var kptfileSamples = []string{
	"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
	"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n    a: b\npipeline:\n  mutators:\n    - image: set-namespace:v0.4.5\n      configMap:\n        namespace: shop\n  validators:\n    - exec: ./check\n      configPath: c.yaml\nupstream:\n  type: git\n  git:\n    repo: https://example.com/r\n    directory: /p\n    ref: main\n",
	"{apiVersion: kpt.dev/v1, kind: Kptfile, metadata: {name: app}}",
	"apiVersion: \"kpt.dev/v1\"\nkind: 'Kptfile'\nmetadata:\n  name: app # comment\n",
	"apiVersion: kpt.dev/v1alpha2\nkind: Kptfile\nmetadata:\n  name: app\n",
	"apiVersion: kpt.dev/v1\nkind: Other\nmetadata:\n  name: app\n",
	"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\nbogus: 1\n",
	"apiVersion: kpt.dev/v1\nkind: Kptfile\napiVersion: kpt.dev/v1\nmetadata:\n  name: app\n",
	"<<: {apiVersion: kpt.dev/v1, kind: Kptfile}\nmetadata:\n  name: app\n",
	"apiVersion: &v kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: *v\n",
	"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n---\napiVersion: v1\nkind: ConfigMap\n",
	"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: [\n",
	"", "---\n", "apiVersion: kpt.dev/v1\n", "- a\n",
	"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\nstatus:\n  conditions:\n    - type: Rendered\n      status: \"True\"\n",
}

func TestDecodeV1MatchesKpt(t *testing.T) {
	t.Parallel()
	taken := 0
	for _, s := range kptfileSamples {
		if checkDecodeV1(t, []byte(s)) {
			taken++
		}
	}
	if taken < 5 {
		t.Errorf("decodeV1 took %d samples, want the v1 ones", taken)
	}
}

func FuzzDecodeV1(f *testing.F) {
	for _, s := range kptfileSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeV1(t, b) })
}

// checkDecodeV1 holds decodeV1 to kpt's decode: whatever it decodes, kpt
// decodes without error into the same KptFile. It reports whether
// decodeV1 took b.
func checkDecodeV1(t *testing.T, b []byte) bool {
	got := decodeV1(b)
	if got == nil {
		return false
	}
	want, err := kptfileutil.DecodeKptfile(bytes.NewReader(b))
	if err != nil {
		t.Errorf("decodeV1(%q) decoded what kpt refuses: %v", b, err)
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("decodeV1(%q) = %+v, kpt decodes %+v", b, got, want)
	}
	return true
}
