package pkgmerge

import "testing"

func TestConflictFormat(t *testing.T) {
	t.Parallel()
	scalar := Conflict{File: "a.yaml", Resource: "ConfigMap x", Field: "data.k", Local: "1", Upstream: "2"}
	if got := scalar.Format("  ", ""); got != "  "+scalar.String()+"\n" {
		t.Errorf("scalar conflict: %q", got)
	}
	list := Conflict{File: "a.yaml", Resource: "Deployment web", Field: "spec.args", Local: "- a\n- local", Upstream: "- a\n- up"}
	want := "  conflict: a.yaml: Deployment web: spec.args (upstream kept):\n" +
		"    local:\n      - a\n      - local\n    upstream:\n      - a\n      - up\n"
	if got := list.Format("  ", "conflict: "); got != want {
		t.Errorf("list conflict:\n%s\nwant\n%s", got, want)
	}
}
