package gitstore

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/porch"
)

func TestSelectRevisions(t *testing.T) {
	t.Parallel()
	rows := []Revision{
		{Name: "deploy.a.v1", Package: "a", Workspace: "v1", Revision: 1, Lifecycle: porch.Published},
		{Name: "deploy.a.w", Package: "a", Workspace: "w", Lifecycle: porch.Draft},
		{Name: "deploy.b.v1", Package: "b", Workspace: "v1", Revision: 1, Lifecycle: porch.Published},
	}
	for _, tc := range []struct {
		arg        string
		want       []string
		wantSingle bool
	}{
		{"deploy.a.w", []string{"deploy.a.w"}, true},
		{"a", []string{"deploy.a.v1", "deploy.a.w"}, false},
		{"b", []string{"deploy.b.v1"}, false},
	} {
		got, single, err := SelectRevisions(rows, tc.arg, "deploy")
		if err != nil {
			t.Fatalf("%s: %v", tc.arg, err)
		}
		var names []string
		for _, r := range got {
			names = append(names, r.Name)
		}
		if strings.Join(names, ",") != strings.Join(tc.want, ",") || single != tc.wantSingle {
			t.Errorf("%s: got %v single=%t, want %v single=%t", tc.arg, names, single, tc.want, tc.wantSingle)
		}
	}
	if _, _, err := SelectRevisions(rows, "c", "deploy"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown name: got %v, want ErrNotFound", err)
	}
}

func TestWriteRevisions(t *testing.T) {
	t.Parallel()
	rows := []Revision{{Name: "deploy.a.v1", Package: "a", Workspace: "v1", Revision: 1, Latest: true, Lifecycle: porch.Published, Repository: "deploy"}}
	for _, tc := range []struct {
		format string
		single bool
		want   []string
	}{
		{"table", false, []string{"NAME          PACKAGE   WORKSPACENAME", "deploy.a.v1   a         v1"}},
		{"yaml", true, []string{"kind: PackageRevision", "kpt.dev/latest-revision: \"true\"", "packageName: a"}},
		{"yaml", false, []string{"kind: List", "- apiVersion: porch.kpt.dev/v1alpha1"}},
		{"json", true, []string{`"kind": "PackageRevision"`, `"revision": 1`}},
	} {
		var b bytes.Buffer
		if err := WriteRevisions(&b, rows, tc.format, tc.single); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("-o %s (single=%t) does not say %q:\n%s", tc.format, tc.single, w, b.String())
			}
		}
	}
	if err := WriteRevisions(&bytes.Buffer{}, rows, "wide", false); err == nil || !strings.Contains(err.Error(), "expected table, yaml or json") {
		t.Errorf("-o wide: got %v, want an error naming the formats", err)
	}
}
