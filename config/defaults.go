package config

// Defaults for fields left empty.
const (
	DefaultDirectory      = "/"
	DefaultUpdatePolicy   = "propose"
	DefaultMergeMethod    = "merge"
	DefaultMaxOpenUpdates = 20
	DefaultMinApprovals   = 1
	DefaultRevision       = "latest"
	DefaultAdoption       = "adoptNone"
	DefaultDeletion       = "delete"
)

// Defaults returns a copy of f with every default applied: this is the one
// place defaults live. A missing Repository gets one with defaults, and
// variants inherit the Repository's update policy.
func Defaults(f *File) *File {
	out := *f
	repo := Repository{TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindRepository}}
	if f.Repository != nil {
		repo = *f.Repository
	}
	s := &repo.Spec
	if s.Directory == "" {
		s.Directory = DefaultDirectory
	}
	if s.UpdatePolicy == "" {
		s.UpdatePolicy = DefaultUpdatePolicy
	}
	if s.MergeMethod == "" {
		s.MergeMethod = DefaultMergeMethod
	}
	if s.MaxOpenUpdates == 0 {
		s.MaxOpenUpdates = DefaultMaxOpenUpdates
	}
	if s.Approvals == nil {
		s.Approvals = &Approvals{}
	} else {
		a := *s.Approvals
		s.Approvals = &a
	}
	if s.Approvals.Minimum == 0 {
		s.Approvals.Minimum = DefaultMinApprovals
	}
	out.Repository = &repo
	out.Variants = make([]PackageVariant, len(f.Variants))
	for i, pv := range f.Variants {
		ps := &pv.Spec
		if ps.Upstream != nil {
			u := *ps.Upstream
			if u.Revision == "" {
				u.Revision = DefaultRevision
			}
			ps.Upstream = &u
		}
		if ps.AdoptionPolicy == "" {
			ps.AdoptionPolicy = DefaultAdoption
		}
		if ps.DeletionPolicy == "" {
			ps.DeletionPolicy = DefaultDeletion
		}
		if ps.UpdatePolicy == "" {
			ps.UpdatePolicy = s.UpdatePolicy
		}
		out.Variants[i] = pv
	}
	out.Sets = make([]PackageVariantSet, len(f.Sets))
	for i, set := range f.Sets {
		if set.Spec.Upstream != nil {
			u := *set.Spec.Upstream
			if u.Revision == "" {
				u.Revision = DefaultRevision
			}
			set.Spec.Upstream = &u
		}
		out.Sets[i] = set
	}
	return &out
}
