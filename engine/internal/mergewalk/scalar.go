// Copyright 2019 The Kubernetes Authors.
// SPDX-License-Identifier: Apache-2.0
// Forked from sigs.k8s.io/kustomize/kyaml v0.21.1 yaml/walk (see doc.go).

package mergewalk

import "sigs.k8s.io/kustomize/kyaml/yaml"

// walkScalar returns the value of VisitScalar
func (l Walker) walkScalar() (*yaml.RNode, error) {
	return l.VisitScalar(l.Sources, l.Schema)
}
