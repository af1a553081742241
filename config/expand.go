package config

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// Porch's limits for generated PackageVariant names.
const (
	variantNameMaxLength  = 63
	variantNameHashLength = 8
)

// Object is what CEL expressions see of a repository or package: Porch
// exposes name, namespace, labels and annotations.
type Object struct {
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
}

func (o Object) input() map[string]any {
	labels, annos := o.Labels, o.Annotations
	if labels == nil {
		labels = map[string]string{}
	}
	if annos == nil {
		annos = map[string]string{}
	}
	return map[string]any{"name": o.Name, "namespace": o.Namespace, "labels": labels, "annotations": annos}
}

// ExpandInput is what expanding a PackageVariantSet needs to know about the
// world: the upstream package revision and the repositories a selector can
// match (name → labels, e.g. forge topics).
type ExpandInput struct {
	Upstream     Object
	Repositories []Object
}

// Expand turns a PackageVariantSet into the PackageVariants it stands for,
// as Porch's PackageVariantSet controller does: explicit repositories (with
// package names defaulting to the upstream's) or a label selector over the
// known repositories, each rendered through the target's template with CEL
// expressions over repoDefault, packageDefault, upstream, target and
// repository; names are Porch's (set-repo-package, with "/" in owner/name
// repositories made "-", hashed past 63 characters). The set must have passed Parse's validation.
func Expand(set PackageVariantSet, in ExpandInput) ([]PackageVariant, error) {
	if set.Spec.Upstream == nil {
		return nil, fmt.Errorf("PackageVariantSet %s: spec.upstream is required", set.Metadata.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ExpandTimeout)
	defer cancel()
	ev := &evaluator{ctx: ctx, set: set.Metadata.Name, progs: map[string]cel.Program{}}
	var out []PackageVariant
	seen := map[string]bool{}
	for i, t := range set.Spec.Targets {
		targets, err := unroll(set, t, in)
		if err != nil {
			return nil, fmt.Errorf("PackageVariantSet %s: spec.targets[%d]: %w", set.Metadata.Name, i, err)
		}
		for _, tc := range targets {
			spec, err := render(ev, set, t.Template, tc, in)
			if err != nil {
				return nil, fmt.Errorf("PackageVariantSet %s: spec.targets[%d]: %w", set.Metadata.Name, i, err)
			}
			if err := CheckPackagePath(spec.Downstream.Package); err != nil {
				return nil, fmt.Errorf("PackageVariantSet %s: spec.targets[%d]: the downstream package %q for %s %w", set.Metadata.Name, i, spec.Downstream.Package, spec.Downstream.Repo, err)
			}
			// Porch's id; forge repositories are owner/name, and "/" has no
			// place in a name that ends up in function names and branches.
			id := set.Metadata.Name + "-" + strings.ReplaceAll(spec.Downstream.Repo, "/", "-") + "-" + spec.Downstream.Package
			if seen[id] {
				return nil, fmt.Errorf("PackageVariantSet %s: two targets produce the same downstream %s/%s", set.Metadata.Name, spec.Downstream.Repo, spec.Downstream.Package)
			}
			seen[id] = true
			out = append(out, PackageVariant{
				TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindPackageVariant},
				Metadata: ObjectMeta{Name: VariantName(id), Labels: map[string]string{"kptbot.dev/packagevariantset": set.Metadata.Name}},
				Spec:     *spec,
			})
		}
	}
	return out, nil
}

// VariantName is Porch's name for a generated PackageVariant.
func VariantName(id string) string {
	if len(id) <= variantNameMaxLength {
		return id
	}
	sum := sha1.Sum([]byte(id))
	stub := variantNameMaxLength - variantNameHashLength - 1
	return id[:stub] + "-" + hex.EncodeToString(sum[:])[:variantNameHashLength]
}

// targetContext is one downstream a target stands for.
type targetContext struct {
	repoDefault, packageDefault string
	object                      *Object // the selected repository, for selectors
}

func unroll(set PackageVariantSet, t Target, in ExpandInput) ([]targetContext, error) {
	var out []targetContext
	if len(t.Repositories) > 0 {
		for _, r := range t.Repositories {
			names := r.PackageNames
			if len(names) == 0 {
				names = []string{set.Spec.Upstream.Package}
			}
			for _, pn := range names {
				out = append(out, targetContext{repoDefault: r.Name, packageDefault: pn})
			}
		}
		return out, nil
	}
	sel := t.RepositorySelector
	if sel == nil {
		return nil, fmt.Errorf("exactly one of repositories and repositorySelector must be set")
	}
	for i := range in.Repositories {
		repo := in.Repositories[i]
		ok, err := sel.Matches(repo.Labels)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, targetContext{repoDefault: repo.Name, packageDefault: set.Spec.Upstream.Package, object: &repo})
		}
	}
	return out, nil
}

// Matches reports whether labels satisfy the selector (Kubernetes
// semantics: every matchLabels entry and every expression).
func (s *LabelSelector) Matches(labels map[string]string) (bool, error) {
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false, nil
		}
	}
	for _, e := range s.MatchExpressions {
		v, has := labels[e.Key]
		in := false
		for _, x := range e.Values {
			if x == v {
				in = true
			}
		}
		switch e.Operator {
		case "In":
			if !has || !in {
				return false, nil
			}
		case "NotIn":
			if has && in {
				return false, nil
			}
		case "Exists":
			if !has {
				return false, nil
			}
		case "DoesNotExist":
			if has {
				return false, nil
			}
		default:
			return false, fmt.Errorf("repositorySelector: unknown operator %q", e.Operator)
		}
	}
	return true, nil
}

func render(ev *evaluator, set PackageVariantSet, t *PackageVariantTemplate, tc targetContext, in ExpandInput) (*PackageVariantSpec, error) {
	up := *set.Spec.Upstream
	spec := &PackageVariantSpec{Upstream: &up, Downstream: &Downstream{Repo: tc.repoDefault, Package: tc.packageDefault}}
	if t == nil {
		return spec, nil
	}
	inputs := map[string]any{
		"repoDefault":    tc.repoDefault,
		"packageDefault": tc.packageDefault,
		"upstream":       in.Upstream.input(),
	}
	if tc.object != nil {
		inputs["target"] = tc.object.input()
	} else {
		inputs["target"] = map[string]any{"repo": tc.repoDefault, "package": tc.packageDefault}
	}
	var err error
	d := t.Downstream
	if d == nil {
		d = &DownstreamTemplate{}
	}
	repoExpr, pkgExpr := d.RepoExpr, d.PackageExpr
	if t.DownstreamExprs != nil {
		repoExpr, pkgExpr = firstNonEmpty(repoExpr, t.DownstreamExprs.RepoExpr), firstNonEmpty(pkgExpr, t.DownstreamExprs.PackageExpr)
	}
	if d.Repo != "" {
		spec.Downstream.Repo = d.Repo
	}
	if repoExpr != "" {
		if spec.Downstream.Repo, err = ev.eval(repoExpr, inputs); err != nil {
			return nil, fmt.Errorf("template.downstream.repoExpr: %w", err)
		}
	}
	inputs["repository"] = repositoryInput(spec.Downstream.Repo, in.Repositories)
	if d.Package != "" {
		spec.Downstream.Package = d.Package
	}
	if pkgExpr != "" {
		if spec.Downstream.Package, err = ev.eval(pkgExpr, inputs); err != nil {
			return nil, fmt.Errorf("template.downstream.packageExpr: %w", err)
		}
	}
	spec.AdoptionPolicy, spec.DeletionPolicy, spec.UpdatePolicy = t.AdoptionPolicy, t.DeletionPolicy, t.UpdatePolicy
	if spec.Labels, err = overlay(ev, "template.labelExprs", t.Labels, t.LabelExprs, inputs); err != nil {
		return nil, err
	}
	if spec.Annotations, err = overlay(ev, "template.annotationExprs", t.Annotations, t.AnnotationExprs, inputs); err != nil {
		return nil, err
	}
	if pc := t.PackageContext; pc != nil {
		data, err := overlay(ev, "template.packageContext.dataExprs", pc.Data, pc.DataExprs, inputs)
		if err != nil {
			return nil, err
		}
		remove, err := overlaySlice(ev, "template.packageContext.removeKeyExprs", pc.RemoveKeys, pc.RemoveKeyExprs, inputs)
		if err != nil {
			return nil, err
		}
		spec.PackageContext = &PackageContext{Data: data, RemoveKeys: remove}
	}
	for i, it := range t.Injectors {
		inj := InjectionSelector{Group: it.Group, Version: it.Version, Kind: it.Kind, Name: it.Name}
		if it.NameExpr != "" {
			if inj.Name, err = ev.eval(it.NameExpr, inputs); err != nil {
				return nil, fmt.Errorf("template.injectors[%d].nameExpr: %w", i, err)
			}
		}
		spec.Injectors = append(spec.Injectors, inj)
	}
	if p := t.Pipeline; p != nil {
		var pl Pipeline
		if pl.Validators, err = renderFunctions(ev, "template.pipeline.validators", p.Validators, inputs); err != nil {
			return nil, err
		}
		if pl.Mutators, err = renderFunctions(ev, "template.pipeline.mutators", p.Mutators, inputs); err != nil {
			return nil, err
		}
		if len(pl.Mutators)+len(pl.Validators) > 0 {
			spec.Pipeline = &pl
		}
	}
	return spec, nil
}

// repositoryInput is the downstream repository as expressions see it; a
// repository kptbot does not know (an explicit target on another forge)
// is still named, as Porch requires it to exist only to read its labels.
func repositoryInput(name string, repos []Object) map[string]any {
	for _, r := range repos {
		if r.Name == name {
			return r.input()
		}
	}
	return Object{Name: name}.input()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func renderFunctions(ev *evaluator, field string, fts []FunctionTemplate, inputs map[string]any) ([]kptfilev1.Function, error) {
	var out []kptfilev1.Function
	for i, ft := range fts {
		f := ft.Function
		cm, err := overlay(ev, fmt.Sprintf("%s[%d].configMapExprs", field, i), ft.ConfigMap, ft.ConfigMapExprs, inputs)
		if err != nil {
			return nil, err
		}
		f.ConfigMap = cm
		out = append(out, f)
	}
	return out, nil
}

func overlay(ev *evaluator, field string, in map[string]string, exprs []MapExpr, inputs map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(in)+len(exprs))
	for k, v := range in {
		out[k] = v
	}
	for i, me := range exprs {
		k, v := me.Key, me.Value
		var err error
		if me.KeyExpr != "" {
			if k, err = ev.eval(me.KeyExpr, inputs); err != nil {
				return nil, fmt.Errorf("%s[%d].keyExpr: %w", field, i, err)
			}
		}
		if me.ValueExpr != "" {
			if v, err = ev.eval(me.ValueExpr, inputs); err != nil {
				return nil, fmt.Errorf("%s[%d].valueExpr: %w", field, i, err)
			}
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func overlaySlice(ev *evaluator, field string, in, exprs []string, inputs map[string]any) ([]string, error) {
	set := map[string]bool{}
	for _, v := range in {
		set[v] = true
	}
	for i, e := range exprs {
		v, err := ev.eval(e, inputs)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		set[v] = true
	}
	if len(set) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, nil
}
