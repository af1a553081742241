package check

import (
	"strings"
	"testing"
)

func TestChangeDigest(t *testing.T) {
	base := map[string][]byte{"pkgs/ns/cm.yaml": []byte("a"), "README.md": []byte("r")}
	head := map[string][]byte{"pkgs/ns/cm.yaml": []byte("b"), "README.md": []byte("r")}
	moved := map[string][]byte{"pkgs/ns/cm.yaml": []byte("a"), "README.md": []byte("moved")}
	rebased := map[string][]byte{"pkgs/ns/cm.yaml": []byte("b"), "README.md": []byte("moved")}
	withWorkflow := map[string][]byte{"pkgs/ns/cm.yaml": []byte("b"), "README.md": []byte("r"), ".github/workflows/x.yml": []byte("on: push")}
	d := ChangeDigest(base, head)
	if ChangeDigest(moved, rebased) != d {
		t.Error("a rebase with the same edit changed the change digest")
	}
	if ChangeDigest(base, withWorkflow) == d {
		t.Error("adding a workflow outside packages left the change digest unchanged")
	}
	if ChangeDigest(base, map[string][]byte{"pkgs/ns/cm.yaml": []byte("b")}) == d {
		t.Error("deleting README.md left the change digest unchanged")
	}
}

func TestReport(t *testing.T) {
	failed := Result{Name: "ns", Message: "boom", Findings: []Finding{
		{Severity: SeverityError, File: "pkgs/ns/cm.yaml", Line: 3, Message: "replicas above 10"},
		{Severity: SeverityWarning, Message: "no file"},
	}}
	rep := failed.Report("kptbot/ns", "abc")
	if rep.Conclusion != "failure" || rep.HeadSHA != "abc" || rep.Name != "kptbot/ns" || len(rep.Annotations) != 1 ||
		rep.Annotations[0].Path != "pkgs/ns/cm.yaml" || rep.Annotations[0].Line != 3 || rep.Annotations[0].Level != "failure" {
		t.Fatalf("failed render's report = %+v", rep)
	}
	for _, want := range []string{"boom", "pkgs/ns/cm.yaml:3", "replicas above 10", "no file"} {
		if !strings.Contains(rep.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, rep.Summary)
		}
	}
	ok := Result{Name: "ns", OK: true, Diff: ResourceDiff{Added: []string{"ConfigMap a"}}}
	if rep := ok.Report("kptbot/ns", "abc"); rep.Conclusion != "success" || rep.Title != "rendered" || !strings.Contains(rep.Summary, "1 added") {
		t.Errorf("rendered package's report = %+v", rep)
	}
	if rep := (Result{Deleted: true, OK: true}).Report("kptbot/ns", "abc"); rep.Conclusion != "success" || rep.Title != "package deleted" {
		t.Errorf("deleted package's report = %+v", rep)
	}
	if got := Truncate("abcdef", 3); got != "abc…" || Truncate("ab", 3) != "ab" {
		t.Errorf("Truncate = %q", got)
	}
}
