package trust

import (
	"errors"
	"testing"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
)

func TestReadableBy(t *testing.T) {
	t.Parallel()
	gh := func(name string, private bool) forge.Repo {
		return forge.Repo{Forge: forge.GitHub, FullName: name, Private: private}
	}
	gl := func(name string, private bool) forge.Repo {
		return forge.Repo{Forge: forge.GitLab, FullName: name, Private: private}
	}
	share := &config.RepositorySpec{AllowedDownstreams: []string{"partner/site", "friends/*", "gitlab:ops/edge"}}
	for _, tc := range []struct {
		name     string
		up       forge.Repo
		spec     *config.RepositorySpec
		down     forge.Repo
		readable bool
	}{
		{"public upstream", gh("acme/bp", false), nil, gh("mallory/x", false), true},
		{"public across forges", gh("acme/bp", false), nil, gl("mallory/x", false), true},
		{"itself", gh("acme/bp", true), nil, gh("ACME/bp", true), true},
		{"private, same owner", gh("acme/bp", true), nil, gh("Acme/site", false), true},
		{"private, other owner", gh("acme/bp", true), nil, gh("mallory/x", false), false},
		{"private, owner name on another forge", gh("acme/bp", true), nil, gl("acme/x", false), false},
		{"private, same GitLab top-level group", gl("acme/platform/bp", true), nil, gl("acme/sites/edge", false), true},
		{"private, other GitLab group", gl("acme/platform/bp", true), nil, gl("acmex/sites/edge", false), false},
		{"private, listed", gh("acme/bp", true), share, gh("partner/site", false), true},
		{"private, listed owner/*", gh("acme/bp", true), share, gh("friends/any", false), true},
		{"private, not listed", gh("acme/bp", true), share, gh("partner/other", false), false},
		{"private, listed on another forge", gh("acme/bp", true), share, gl("ops/edge", false), true},
		{"private, unprefixed entry is the upstream's forge", gh("acme/bp", true), share, gl("partner/site", false), false},
	} {
		err := ReadableBy(tc.up, tc.spec, tc.down)
		if (err == nil) != tc.readable || (err != nil && !errors.Is(err, ErrNotShared)) {
			t.Errorf("%s: ReadableBy = %v, want readable %v", tc.name, err, tc.readable)
		}
	}
}

func TestAcceptedSource(t *testing.T) {
	t.Parallel()
	prod := forge.Repo{Forge: forge.GitHub, FullName: "acme/prod"}
	spec := config.RepositorySpec{AcceptVariantsFrom: []config.VariantSource{{Repo: "acme/fleet", UpdatePolicy: "publish"}}}
	for _, tc := range []struct {
		name string
		from forge.Repo
		ok   bool
	}{
		{"itself", forge.Repo{Forge: forge.GitHub, FullName: "ACME/prod"}, true},
		{"listed", forge.Repo{Forge: forge.GitHub, FullName: "acme/Fleet"}, true},
		{"not listed", forge.Repo{Forge: forge.GitHub, FullName: "acme/sandbox"}, false},
		{"listed name on another forge", forge.Repo{Forge: forge.GitLab, FullName: "acme/fleet"}, false},
	} {
		if _, ok := AcceptedSource(prod, spec, tc.from); ok != tc.ok {
			t.Errorf("%s: accepted %v, want %v", tc.name, ok, tc.ok)
		}
	}
	set := config.PackageVariant{Spec: config.PackageVariantSpec{UpdatePolicy: "publish", AdoptionPolicy: "adoptExisting"}}
	from := forge.Repo{Forge: forge.GitHub, FullName: "acme/fleet"}
	if got := ApplySource(set, prod, from, config.VariantSource{Repo: "acme/fleet"}).Spec; got.UpdatePolicy != "" || got.AdoptionPolicy != "" {
		t.Errorf("a set elsewhere kept its policies: %+v", got)
	}
	if got := ApplySource(set, prod, from, config.VariantSource{Repo: "acme/fleet", UpdatePolicy: "draft"}).Spec; got.UpdatePolicy != "draft" {
		t.Errorf("the target's policy for the source was not applied: %+v", got)
	}
	if got := ApplySource(set, prod, prod, config.VariantSource{}).Spec; got.UpdatePolicy != "publish" {
		t.Errorf("a repository's own set lost its policy: %+v", got)
	}
}

func TestRefKey(t *testing.T) {
	t.Parallel()
	want := "git.example:8443/acme/bp"
	for _, ref := range []string{
		"https://git.example:8443/acme/bp.git",
		"https://git.example:8443/acme/bp",
		"HTTPS://GIT.example:8443/Acme/BP.git/",
		"https://x-access-token:secret@git.example:8443/acme/bp.git",
		"ssh://git@git.example:8443/acme/bp.git",
		" https://git.example:8443/acme/bp/ ",
		"https://git.example:8443//acme//bp.git",
		"https://git.example:8443/other/../acme/./bp",
	} {
		if got := RefKey(ref); got != want {
			t.Errorf("RefKey(%q) = %q, want %q", ref, got, want)
		}
	}
	if got := RefKey("git@github.com:Acme/BP.git"); got != "github.com/acme/bp" {
		t.Errorf("scp-like: %q", got)
	}
	if got := RefKey("Acme/BP"); got != "acme/bp" {
		t.Errorf("owner/name: %q", got)
	}
}
