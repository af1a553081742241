package variant

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/porch"
)

// Revision is one revision of a downstream package as the appliers find
// it: a published package, a draft or a proposal (on a forge, the open
// update change is the draft).
type Revision struct {
	Package string
	// Name is what the applier acts on: a workspace, a change, a tag.
	Name      string
	Lifecycle porch.Lifecycle
	// Owner is the variant its Kptfile names ("" for none) and
	// DeletionPolicy the policy it remembers.
	Owner          string
	DeletionPolicy string
}

// Decision is what happens to one revision.
type Decision struct {
	Revision
	// Kind is Edit (the variant Variant drafts on it), Delete (drafts and
	// proposals are deleted, a published package's deletion is proposed)
	// or Orphan (left alone).
	Kind Kind
	// Variant is the variant that keeps (or adopts) the draft.
	Variant string
	// Adopted: the draft had no owner and adoptionPolicy adoptExisting
	// makes it the variant's.
	Adopted bool
	Why     string
}

// Decide is Porch's PackageVariant controller on a repository's
// revisions: a revision owned by a variant no longer declared is deleted
// or orphaned by the deletionPolicy it remembers; a draft owned by a
// variant that now targets another package is deleted or orphaned by that
// variant's policy; a variant keeps its own draft of its package, or
// adopts an unowned one with adoptionPolicy adoptExisting rather than
// open a second. Published revisions of declared variants are left to
// Make. Decisions come sorted by package and name.
func Decide(variants []config.PackageVariant, revs []Revision) []Decision {
	declared := map[string]config.PackageVariant{}
	for _, pv := range variants {
		declared[pv.Metadata.Name] = pv
	}
	sorted := append([]Revision(nil), revs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Package != sorted[j].Package {
			return sorted[i].Package < sorted[j].Package
		}
		return sorted[i].Name < sorted[j].Name
	})
	var out []Decision
	hasDraft := map[string]bool{} // variant → it keeps a draft
	for _, r := range sorted {
		if r.Owner == "" || r.Lifecycle == porch.DeletionProposed {
			continue
		}
		pv, ok := declared[r.Owner]
		switch {
		case !ok:
			out = append(out, gone(r))
		case r.Lifecycle == porch.Published:
		case strings.Trim(pv.Spec.Downstream.Package, "/") != r.Package:
			d := Decision{Revision: r, Kind: policyKind(pv.Spec.DeletionPolicy)}
			d.Why = fmt.Sprintf("variant %s now targets %s; deletionPolicy %s", pv.Metadata.Name, strings.Trim(pv.Spec.Downstream.Package, "/"), policyName(d.Kind))
			out = append(out, d)
		case !hasDraft[r.Owner]:
			hasDraft[r.Owner] = true
			out = append(out, Decision{Revision: r, Kind: Edit, Variant: r.Owner, Why: "the variant's draft"})
		}
	}
	for _, pv := range variants {
		if hasDraft[pv.Metadata.Name] || pv.Spec.AdoptionPolicy != "adoptExisting" {
			continue
		}
		pkg := strings.Trim(pv.Spec.Downstream.Package, "/")
		for _, r := range sorted {
			if r.Owner == "" && r.Package == pkg && (r.Lifecycle == porch.Draft || r.Lifecycle == porch.Proposed) {
				hasDraft[pv.Metadata.Name] = true
				out = append(out, Decision{Revision: r, Kind: Edit, Variant: pv.Metadata.Name, Adopted: true,
					Why: "adoptionPolicy adoptExisting: adopting the unowned draft " + r.Name})
				break
			}
		}
	}
	return out
}

// gone decides for a revision whose variant is no longer declared.
func gone(r Revision) Decision {
	d := Decision{Revision: r, Kind: policyKind(r.DeletionPolicy)}
	d.Why = fmt.Sprintf("variant %s no longer exists; deletionPolicy %s", r.Owner, policyName(d.Kind))
	return d
}

func policyKind(policy string) Kind {
	if policy == "orphan" {
		return Orphan
	}
	return Delete
}

func policyName(k Kind) string {
	if k == Orphan {
		return "orphan"
	}
	return "delete"
}

// DraftOf is the draft decision for variant among ds (the zero Decision
// and false when it has none).
func DraftOf(ds []Decision, variant string) (Decision, bool) {
	for _, d := range ds {
		if d.Kind == Edit && d.Variant == variant {
			return d, true
		}
	}
	return Decision{}, false
}
