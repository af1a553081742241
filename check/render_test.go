package check

import "testing"

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
