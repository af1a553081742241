package resourcelist

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/comments"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestCopyCommentsSchemaCases holds copyComments to kyaml's where the
// resource's OpenAPI schema decides the outcome (containers and ports
// are paired by their merge keys, not by position) and where it cannot
// (no comment under a sequence), so skipping the schema in the second
// case never changes a result.
func TestCopyCommentsSchemaCases(t *testing.T) {
	t.Parallel()
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app # the app
spec:
  template:
    spec:
      containers:
      - name: a
        image: a:1 # kpt-set: ${a}
        ports:
        - containerPort: 80 # http
        - containerPort: 443
      - name: b
        image: b:1 # kpt-set: ${b}
`
	const reordered = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
      - name: b
        image: b:1
      - name: a
        image: a:1
        ports:
        - containerPort: 443
        - containerPort: 80
`
	const plain = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app # the app
  labels:
    tier: >
      web
spec:
  replicas: 1 # one
  template:
    spec:
      containers:
      - name: a
        image: a:1
`
	const plainTo = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels:
    tier: >
      web
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: a
        image: a:2
`
	for _, c := range []struct{ name, from, to string }{
		{"reordered lists", deploy, reordered},
		{"no comment in a list", plain, plainTo},
		{"folded scalar in a list", plainTo, `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: a
    args:
    - >
      folded
`},
	} {
		from, to := yaml.MustParse(c.from), yaml.MustParse(c.to)
		want, got := to.Copy(), to.Copy()
		if err := comments.CopyComments(from, want); err != nil {
			t.Fatalf("%s: kyaml: %v", c.name, err)
		}
		if err := copyComments(from, got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(want.MustString(), got.MustString()); diff != "" {
			t.Errorf("%s: (-kyaml +kptbot):\n%s", c.name, diff)
		}
	}
}
