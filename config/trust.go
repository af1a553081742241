package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// Cross-repository trust: what one repository's kptbot.yaml may do to
// another. A PackageVariantSet writes into a target only when the target's
// own kptbot.yaml accepts its repository (AcceptVariantsFrom), and a
// variant's upstream on the bot's forge is read for a downstream only when
// the downstream's audience could read it anyway, or the upstream's
// kptbot.yaml shares it (AllowedDownstreams). Downstream package paths
// are checked here, once, for every reader of kptbot.yaml.

// scalarForms are the struct types kptbot.yaml may also give as a plain
// string (their UnmarshalJSON accepts both).
var scalarForms = map[reflect.Type]bool{reflect.TypeOf(VariantSource{}): true}

// UnmarshalJSON accepts owner/name as well as the mapping form.
func (v *VariantSource) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		*v = VariantSource{Repo: name}
		return nil
	}
	type plain VariantSource
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*v = VariantSource(p)
	return nil
}

// VariantSource returns the entry of spec.acceptVariantsFrom naming repo
// (owner/name on the repository's own forge, case-insensitively).
func (s RepositorySpec) VariantSource(repo string) (VariantSource, bool) {
	for _, v := range s.AcceptVariantsFrom {
		if strings.EqualFold(strings.Trim(v.Repo, "/"), strings.Trim(repo, "/")) {
			return v, true
		}
	}
	return VariantSource{}, false
}

// AllowsDownstream reports whether spec.allowedDownstreams of an upstream
// on forge upForge lists the repository fullName on forge downForge: an
// entry without a "forge:" prefix names a repository on the upstream's
// own forge; owner/* covers every repository under owner.
func (s RepositorySpec) AllowsDownstream(upForge, downForge, fullName string) bool {
	for _, e := range s.AllowedDownstreams {
		f, name := upForge, e
		if i := strings.Index(e, ":"); i > 0 && !strings.Contains(e[:i], "/") {
			f, name = e[:i], e[i+1:]
		}
		if !strings.EqualFold(f, downForge) {
			continue
		}
		name = strings.Trim(name, "/")
		if owner, ok := strings.CutSuffix(name, "/*"); ok {
			if len(fullName) > len(owner) && strings.EqualFold(fullName[:len(owner)+1], owner+"/") {
				return true
			}
			continue
		}
		if strings.EqualFold(name, strings.Trim(fullName, "/")) {
			return true
		}
	}
	return false
}

// CheckPackagePath is the rule for a downstream package path, the
// directory a variant writes, relative to the repository's package
// directory: relative, no empty, "." or ".." segments, and no
// dot-directory (.github, .gitlab, .git hold CI and forge settings, which
// a package must never write).
func CheckPackagePath(p string) error {
	if p == "" {
		return errors.New("is empty")
	}
	if strings.HasPrefix(p, "/") {
		return errors.New("must be relative to the repository's package directory (no leading /)")
	}
	for _, r := range p {
		if r == '\\' || unicode.IsControl(r) {
			return fmt.Errorf("must not contain %q: a package path is slash-separated", r)
		}
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		switch {
		case seg == "":
			return errors.New("must not contain an empty segment (//)")
		case seg == "." || seg == "..":
			return fmt.Errorf("must not contain a %q segment: a package stays inside the repository's package directory", seg)
		case strings.HasPrefix(seg, "."):
			return fmt.Errorf("must not name a dot-directory (%s): those hold CI and forge settings, not packages", seg)
		}
	}
	return nil
}

// checkRepoName checks an owner/name (group/.../project) entry; wildcard
// allows a final "*" segment.
func checkRepoName(name string, wildcard bool) error {
	if name == "" {
		return errors.New("is empty: expected owner/name")
	}
	segs := strings.Split(name, "/")
	if len(segs) < 2 {
		return errors.New("expected owner/name (group/subgroup/project on GitLab)")
	}
	for i, seg := range segs {
		switch {
		case seg == "":
			return errors.New("has an empty segment: expected owner/name")
		case seg == "*" && wildcard && i == len(segs)-1:
		case strings.ContainsAny(seg, "* \t:") || seg == "." || seg == "..":
			if wildcard {
				return fmt.Errorf("segment %q: expected owner/name or owner/*", seg)
			}
			return fmt.Errorf("segment %q: expected owner/name", seg)
		}
	}
	return nil
}

// trust checks a Repository's cross-repository fields.
func (v validator) trust(s RepositorySpec) {
	for i, src := range s.AcceptVariantsFrom {
		p := fmt.Sprintf("spec.acceptVariantsFrom[%d]", i)
		if err := checkRepoName(src.Repo, false); err != nil {
			v.add(p, src.Repo, "%v", err)
		}
		v.enum(p+".updatePolicy", src.UpdatePolicy, updatePolicies)
		v.enum(p+".adoptionPolicy", src.AdoptionPolicy, adoptionPolicy)
	}
	for i, e := range s.AllowedDownstreams {
		name := e
		if j := strings.Index(e, ":"); j > 0 && !strings.Contains(e[:j], "/") {
			name = e[j+1:]
		}
		if err := checkRepoName(name, true); err != nil {
			v.add(fmt.Sprintf("spec.allowedDownstreams[%d]", i), e, "%v (forge:owner/name for a repository on another forge)", err)
		}
	}
}

// packagePath reports a downstream package path that breaks
// CheckPackagePath.
func (v validator) packagePath(path, p string) {
	if p == "" {
		return
	}
	if err := CheckPackagePath(p); err != nil {
		v.add(path, p, "downstream package path %v", err)
	}
}
