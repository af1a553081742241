package mergewalk

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fieldmeta"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestNoFieldMetaMatchesFieldMeta requires noFieldMeta to answer "none"
// only where kyaml's fieldmeta.FieldMeta.Read finds nothing, for line and
// head comments of the shapes packages carry, and to see the JSON ones.
func TestNoFieldMetaMatchesFieldMeta(t *testing.T) {
	t.Parallel()
	comments := []string{
		"", "# kpt-merge: ns/name", "# kpt-set: ${tier}", "# prose {not json}", "#", "# ",
		`# {"$ref": "#/definitions/io.k8s.cli.setters.replicas"}`,
		`#{"$openapi":"replicas"}`, `# {"type": "integer"}`, "# {}", "# null", "# nonsense",
		`# "a string"`, "# 3", "# true", "# [1, 2]", "#\t{\"type\": \"string\"}",
	}
	sawMeta := false
	for _, line := range comments {
		for _, head := range []string{"", "# kpt-merge: a/b", `# {"type": "integer"}`} {
			n := yaml.NewScalarRNode("v")
			n.YNode().LineComment, n.YNode().HeadComment = line, head
			fm := fieldmeta.FieldMeta{}
			err := fm.Read(n)
			found := err != nil || !fm.IsEmpty()
			sawMeta = sawMeta || found
			if found && noFieldMeta(n) {
				t.Errorf("line %q head %q: noFieldMeta says none, fieldmeta read %+v (error %v)", line, head, fm.Schema, err)
			}
		}
	}
	if !sawMeta {
		t.Fatal("no comment held field metadata: the test checks nothing")
	}
}
