// Copyright 2019 The Kubernetes Authors.
// SPDX-License-Identifier: Apache-2.0
// Forked from sigs.k8s.io/kustomize/kyaml v0.21.1 yaml/walk (see doc.go).

package mergewalk

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
	kwalk "sigs.k8s.io/kustomize/kyaml/yaml/walk"
)

// walkNonAssociativeSequence returns the value of VisitList
func (l Walker) walkNonAssociativeSequence() (*yaml.RNode, error) {
	return l.VisitList(l.Sources, l.Schema, kwalk.NonAssociateList)
}
