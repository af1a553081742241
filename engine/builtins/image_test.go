package builtins

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The Pod and Deployment and the cases below are those of the catalog's
// set-image test (functions/go/set-image/transformer/images_transformer_test.go,
// Copyright 2026 The kpt Authors, Apache License 2.0).
const catalogPod = `apiVersion: v1
kind: Pod
metadata:
  name: myPod
spec:
  initContainers:
  - name: initBusybox
    image: busybox:1.36.1
  - name: initAlpine
    image: alpine:3.21
  containers:
  - name: liveNginx
    image: nginx:1.28.1
  - name: liveAlpine
    image: alpine:3.22
`

const catalogDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: myDeployment
  labels:
    app: myApp
spec:
  selector:
    matchLabels:
      app: myApp
  template:
    spec:
      initContainers:
      - name: initBusybox
        image: busybox:1.36.1
      - name: initAlpine
        image: alpine:3.21
      containers:
      - name: liveNginx
        image: nginx:1.28.1
      - name: liveAlpine
        image: alpine:3.22
`

// TestSetImageCatalogCases holds set-image to the catalog's own cases:
// which images change, to what, and how many it counts (a match whose
// value stays the same is counted too).
func TestSetImageCatalogCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		obj    string
		img    imageSpec
		init   [2]string // the init containers' images afterwards
		main   [2]string // the containers' images afterwards
		counts int
	}{
		{"container images replaced by default", catalogPod, imageSpec{Name: "nginx", NewTag: "1.29.0"}, [2]string{"busybox:1.36.1", "alpine:3.21"}, [2]string{"nginx:1.29.0", "alpine:3.22"}, 1},
		{"initContainer images replaced by default", catalogPod, imageSpec{Name: "busybox", NewTag: "1.37.0"}, [2]string{"busybox:1.37.0", "alpine:3.21"}, [2]string{"nginx:1.28.1", "alpine:3.22"}, 1},
		{"just tag is replaced", catalogPod, imageSpec{Name: "alpine", NewTag: "3.24"}, [2]string{"busybox:1.36.1", "alpine:3.24"}, [2]string{"nginx:1.28.1", "alpine:3.24"}, 2},
		{"tag preserved when only changing name", catalogPod, imageSpec{Name: "alpine", NewName: "my.docker.mirror.com/alpine"}, [2]string{"busybox:1.36.1", "my.docker.mirror.com/alpine:3.21"}, [2]string{"nginx:1.28.1", "my.docker.mirror.com/alpine:3.22"}, 2},
		{"name and tag replace", catalogPod, imageSpec{Name: "alpine", NewName: "debian", NewTag: "bookworm"}, [2]string{"busybox:1.36.1", "debian:bookworm"}, [2]string{"nginx:1.28.1", "debian:bookworm"}, 2},
		{"replace specific tag only", catalogPod, imageSpec{Name: "alpine:3.22", NewName: "debian", NewTag: "bookworm"}, [2]string{"busybox:1.36.1", "alpine:3.21"}, [2]string{"nginx:1.28.1", "debian:bookworm"}, 1},
		{"no-op update still logs mutation", catalogPod, imageSpec{Name: "alpine", NewTag: "3.22"}, [2]string{"busybox:1.36.1", "alpine:3.22"}, [2]string{"nginx:1.28.1", "alpine:3.22"}, 2},
		{"deployments are substituted", catalogDeployment, imageSpec{Name: "alpine", NewTag: "3.24"}, [2]string{"busybox:1.36.1", "alpine:3.24"}, [2]string{"nginx:1.28.1", "alpine:3.24"}, 2},
		{"tag and digest together", catalogPod, imageSpec{Name: "nginx", NewTag: "1.29.0", Digest: "sha256:24a0c4b4"}, [2]string{"busybox:1.36.1", "alpine:3.21"}, [2]string{"nginx:1.29.0@sha256:24a0c4b4", "alpine:3.22"}, 1},
	}
	for _, tt := range tests {
		obj := yaml.MustParse(tt.obj)
		n, err := setImages([]*yaml.RNode{obj}, tt.img, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n != tt.counts {
			t.Errorf("%s: counted %d, want %d", tt.name, n, tt.counts)
		}
		podSpec := "spec"
		if obj.GetKind() == "Deployment" {
			podSpec = "spec.template.spec"
		}
		for list, want := range map[string][2]string{"initContainers": tt.init, "containers": tt.main} {
			for i := range want {
				got, err := obj.GetString(podSpec + "." + list + "[" + string(rune('0'+i)) + "].image")
				if err != nil || got != want[i] {
					t.Errorf("%s: %s[%d] = %q (%v), want %q", tt.name, list, i, got, err, want[i])
				}
			}
		}
	}
}
