package config

import (
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/fetch/locator"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// Allowed values, as Porch spells them where Porch has the field.
var (
	updatePolicies  = []string{"draft", "propose", "publish"}
	mergeMethods    = []string{"merge", "squash", "rebase"}
	adoptionPolicy  = []string{"adoptExisting", "adoptNone"}
	deletionPolicy  = []string{"delete", "orphan"}
	selectorOps     = []string{"In", "NotIn", "Exists", "DoesNotExist"}
	reservedContext = []string{"name", "package-path"}
)

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// validate applies Porch's validation rules (and kptbot's) to a parsed
// file, adding every violation to ps.
func validate(ps *problems, f *File) {
	if r := f.Repository; r != nil {
		v := validator{ps: ps, at: f.repositoryAt}
		v.name(r.Metadata.Name)
		s := r.Spec
		v.enum("spec.updatePolicy", s.UpdatePolicy, updatePolicies)
		v.enum("spec.mergeMethod", s.MergeMethod, mergeMethods)
		if s.MaxOpenUpdates < 0 {
			v.add("spec.maxOpenUpdates", fmt.Sprint(s.MaxOpenUpdates), "must not be negative")
		}
		if s.Approvals != nil && s.Approvals.Minimum < 0 {
			v.add("spec.approvals.minimum", fmt.Sprint(s.Approvals.Minimum), "must not be negative")
		}
		if s.Guardrails != nil {
			v.pipeline("spec.guardrails", *s.Guardrails)
		}
		for _, seg := range strings.Split(s.Directory, "/") {
			if seg == ".." {
				v.add("spec.directory", s.Directory, "must stay inside the repository")
				break
			}
		}
		v.trust(s)
	}
	names := map[string]int{}
	for i, pv := range f.Variants {
		v := validator{ps: ps, at: f.variantsAt[i]}
		v.name(pv.Metadata.Name)
		v.unique(names, KindPackageVariant, pv.Metadata.Name)
		s := pv.Spec
		v.upstream("spec.upstream", s.Upstream)
		if s.Downstream == nil || s.Downstream.Package == "" {
			v.add("spec.downstream.package", "", "is required: the package this variant produces")
		} else {
			v.packagePath("spec.downstream.package", s.Downstream.Package)
		}
		v.enum("spec.adoptionPolicy", s.AdoptionPolicy, adoptionPolicy)
		v.enum("spec.deletionPolicy", s.DeletionPolicy, deletionPolicy)
		v.enum("spec.updatePolicy", s.UpdatePolicy, updatePolicies)
		if s.PackageContext != nil {
			v.context("spec.packageContext", s.PackageContext.Data, s.PackageContext.RemoveKeys)
		}
		if s.Pipeline != nil {
			v.pipeline("spec.pipeline", *s.Pipeline)
		}
		for j, in := range s.Injectors {
			if in.Name == "" {
				v.add(fmt.Sprintf("spec.injectors[%d].name", j), "", "is required")
			}
		}
	}
	setNames := map[string]int{}
	for i, set := range f.Sets {
		v := validator{ps: ps, at: f.setsAt[i]}
		v.name(set.Metadata.Name)
		v.unique(setNames, KindPackageVariantSet, set.Metadata.Name)
		v.upstream("spec.upstream", set.Spec.Upstream)
		if len(set.Spec.Targets) == 0 {
			v.add("spec.targets", "", "at least one target is required")
		}
		for j, t := range set.Spec.Targets {
			v.target(fmt.Sprintf("spec.targets[%d]", j), t)
		}
	}
}

// validator adds problems located in one object.
type validator struct {
	ps *problems
	at located
}

func (v validator) add(path, value, format string, args ...any) {
	node := lookup(v.at.node, strings.NewReplacer("[", ".", "]", "").Replace(path))
	v.ps.add(v.at.doc, node, path, value, format, args...)
}

func (v validator) name(n string) {
	if n == "" {
		v.add("metadata.name", "", "is required")
	}
}

func (v validator) unique(seen map[string]int, kind, name string) {
	if name == "" {
		return
	}
	if first, ok := seen[name]; ok {
		v.add("metadata.name", name, "a %s of that name is already defined in document %d", kind, first)
		return
	}
	seen[name] = v.at.doc
}

func (v validator) enum(path, value string, allowed []string) {
	if value != "" && !oneOf(value, allowed) {
		v.add(path, value, "expected one of %s", strings.Join(allowed, ", "))
	}
}

func (v validator) upstream(path string, u *Upstream) {
	if u == nil {
		v.add(path, "", "is required: {repo, package, revision}")
		return
	}
	if u.Repo == "" {
		v.add(path+".repo", "", "is required: a git URL or owner/name")
	}
	if u.Package == "" {
		v.add(path+".package", "", "is required: the package path in the upstream repository")
	}
	if u.WorkspaceName != "" {
		if u.Revision != "" && u.Revision != DefaultRevision {
			v.add(path+".workspaceName", u.WorkspaceName, "and %s.revision %q are mutually exclusive: the workspace names one published revision", path, u.Revision)
		}
		if locator.Store(u.Repo) != locator.Git {
			v.add(path+".workspaceName", u.WorkspaceName, "is only for git upstreams, whose published revisions record their workspace (Porch's trailer)")
		}
	}
	switch locator.Store(u.Repo) {
	case locator.OCI:
		v.ociUpstream(path, u)
	case locator.HTTP:
		v.archiveUpstream(path, u)
	default:
		if len(u.Versions) > 0 {
			v.add(path+".versions", strings.Join(u.Versions, ","), "is only for archive URL templates ({version} in repo); a git upstream's tags are listed from the repository")
		}
	}
}

// ociUpstream checks an oci://REGISTRY/REPO upstream: the tag or digest
// belongs in revision, the package names an image repository.
func (v validator) ociUpstream(path string, u *Upstream) {
	ref, err := locator.ParseOCI(u.Repo)
	if err != nil {
		v.add(path+".repo", u.Repo, "%v", err)
	} else if ref.Version != "" {
		v.add(path+".repo", u.Repo, "must name the repository only: put %q in %s.revision", ref.Version, path)
	}
	if err := locator.CheckOCIPackage(u.Package); err != nil {
		v.add(path+".package", u.Package, "names the package's image repository below the OCI repository: %v", err)
	}
	if r := u.Revision; r != "" && r != DefaultRevision && !locator.IsDigest(r) {
		if _, err := locator.ParseOCI("oci://h/r:" + r); err != nil {
			v.add(path+".revision", r, "expected latest, a tag or a sha256: digest")
		}
	}
	if len(u.Versions) > 0 {
		v.add(path+".versions", strings.Join(u.Versions, ","), "is only for archive URL templates: an OCI repository's tags are listed from the registry")
	}
}

// archiveUpstream checks an HTTP archive upstream: a fixed URL has one
// version; a {version} template needs a revision or versions to try.
func (v validator) archiveUpstream(path string, u *Upstream) {
	ref, err := locator.ParseArchive(u.Repo)
	if err != nil {
		v.add(path+".repo", u.Repo, "%v", err)
		return
	}
	if ref.Version != "" {
		v.add(path+".repo", u.Repo, "must not carry @%s: put it in %s.revision", ref.Version, path)
	}
	latest := u.Revision == "" || u.Revision == DefaultRevision
	if !locator.IsTemplate(u.Repo) {
		if !latest {
			v.add(path+".revision", u.Revision, "needs a %s placeholder in %s.repo: an archive URL without one names a single file", locator.VersionPlaceholder, path)
		}
		if len(u.Versions) > 0 {
			v.add(path+".versions", strings.Join(u.Versions, ","), "needs a %s placeholder in %s.repo", locator.VersionPlaceholder, path)
		}
		return
	}
	if latest && len(u.Versions) == 0 {
		v.add(path+".versions", "", "is required when %s.repo is a %s template and revision is latest: list the versions to try (the highest that exists wins)", path, locator.VersionPlaceholder)
	}
	for i, ver := range u.Versions {
		if !locator.IsVersion(ver) {
			v.add(fmt.Sprintf("%s.versions[%d]", path, i), ver, "expected a version: v<N> or semver")
		}
	}
}

func (v validator) context(path string, data map[string]string, remove []string) {
	for _, k := range reservedContext {
		if _, ok := data[k]; ok {
			v.add(path+".data."+k, data[k], "%q is reserved: kptbot sets it from the package", k)
		}
	}
	for i, k := range remove {
		if oneOf(k, reservedContext) {
			v.add(fmt.Sprintf("%s.removeKeys[%d]", path, i), k, "%q is reserved and cannot be removed", k)
		}
	}
}

func (v validator) pipeline(path string, p Pipeline) {
	lists := []struct {
		kind string
		fns  []kptfilev1.Function
	}{{"mutators", p.Mutators}, {"validators", p.Validators}}
	for _, l := range lists {
		for i, f := range l.fns {
			fp := fmt.Sprintf("%s.%s[%d]", path, l.kind, i)
			if strings.Contains(f.Name, ".") {
				v.add(fp+".name", f.Name, "must not contain dots (kptbot names prepended functions PackageVariant.<variant>.<name>.<index>)")
			}
			switch {
			case f.Exec != "":
				v.add(fp+".exec", f.Exec, "exec functions are not allowed in kptbot.yaml; use an image")
			case f.Image == "":
				v.add(fp+".image", "", "is required")
			}
			if f.ConfigPath != "" && len(f.ConfigMap) > 0 {
				v.add(fp, "", "configPath and configMap are mutually exclusive")
			}
		}
	}
}

func (v validator) target(path string, t Target) {
	kinds := 0
	if len(t.Repositories) > 0 {
		kinds++
	}
	if t.RepositorySelector != nil {
		kinds++
	}
	if kinds != 1 {
		v.add(path, "", "exactly one of repositories and repositorySelector must be set")
	}
	for i, r := range t.Repositories {
		if r.Name == "" {
			v.add(fmt.Sprintf("%s.repositories[%d].name", path, i), "", "is required: owner/name or a git URL")
		}
		for j, pn := range r.PackageNames {
			p := fmt.Sprintf("%s.repositories[%d].packageNames[%d]", path, i, j)
			if strings.TrimSpace(pn) == "" {
				// Porch: packageNames[k] cannot be empty
				v.add(p, pn, "cannot be empty: each entry names a downstream package (leave packageNames out for the upstream's name)")
				continue
			}
			v.packagePath(p, pn)
		}
	}
	if sel := t.RepositorySelector; sel != nil {
		for i, e := range sel.MatchExpressions {
			ep := fmt.Sprintf("%s.repositorySelector.matchExpressions[%d]", path, i)
			if e.Key == "" {
				v.add(ep+".key", "", "is required")
			}
			v.enum(ep+".operator", e.Operator, selectorOps)
			if e.Operator == "" {
				v.add(ep+".operator", "", "is required: one of %s", strings.Join(selectorOps, ", "))
			}
		}
	}
	if tp := t.Template; tp != nil {
		v.template(path+".template", *tp)
	}
}

func (v validator) template(path string, t PackageVariantTemplate) {
	v.enum(path+".adoptionPolicy", t.AdoptionPolicy, adoptionPolicy)
	v.enum(path+".deletionPolicy", t.DeletionPolicy, deletionPolicy)
	v.enum(path+".updatePolicy", t.UpdatePolicy, updatePolicies)
	if d := t.Downstream; d != nil {
		if d.Package != "" && d.PackageExpr != "" {
			v.add(path+".downstream", "", "package and packageExpr are mutually exclusive")
		}
		v.packagePath(path+".downstream.package", d.Package)
		if d.Repo != "" && d.RepoExpr != "" {
			v.add(path+".downstream", "", "repo and repoExpr are mutually exclusive")
		}
	}
	for name, exprs := range map[string][]MapExpr{"labelExprs": t.LabelExprs, "annotationExprs": t.AnnotationExprs} {
		v.mapExprs(path+"."+name, exprs)
	}
	if pc := t.PackageContext; pc != nil {
		v.context(path+".packageContext", pc.Data, pc.RemoveKeys)
		v.mapExprs(path+".packageContext.dataExprs", pc.DataExprs)
	}
	if p := t.Pipeline; p != nil {
		var plain Pipeline
		for _, f := range p.Mutators {
			plain.Mutators = append(plain.Mutators, f.Function)
		}
		for _, f := range p.Validators {
			plain.Validators = append(plain.Validators, f.Function)
		}
		v.pipeline(path+".pipeline", plain)
	}
	for i, in := range t.Injectors {
		if (in.Name == "") == (in.NameExpr == "") {
			v.add(fmt.Sprintf("%s.injectors[%d]", path, i), "", "exactly one of name and nameExpr must be set")
		}
	}
}

func (v validator) mapExprs(path string, exprs []MapExpr) {
	for i, e := range exprs {
		p := fmt.Sprintf("%s[%d]", path, i)
		if (e.Key == "") == (e.KeyExpr == "") {
			v.add(p, "", "exactly one of key and keyExpr must be set")
		}
		if (e.Value == "") == (e.ValueExpr == "") {
			v.add(p, "", "exactly one of value and valueExpr must be set")
		}
	}
}
