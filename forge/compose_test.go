package forge

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// tagsOnly is an adapter with one role.
type tagsOnly struct{}

func (tagsOnly) ListTags(context.Context, Repo) ([]Tag, error) {
	return []Tag{{Name: "pkg/v1", SHA: "abc"}}, nil
}

func (tagsOnly) ListBranches(context.Context, Repo) ([]Branch, error) { return nil, nil }

func TestComposeFillsMissingRolesWithNotSupported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := Compose(tagsOnly{})
	if tags, err := f.ListTags(ctx, Repo{}); err != nil || len(tags) != 1 {
		t.Fatalf("ListTags through Compose = %v, %v; want the adapter's own answer", tags, err)
	}
	calls := map[string]error{}
	_, calls["ReadFile"] = f.ReadFile(ctx, Repo{}, "main", "Kptfile")
	_, calls["Merge"] = f.Merge(ctx, Repo{}, 1, "abc", "merge")
	calls["CreateTag"] = f.CreateTag(ctx, Repo{}, "pkg/v1", "abc", "")
	_, calls["ReadComment"] = f.ReadComment(ctx, Repo{}, 1, 2)
	for name, err := range calls {
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("%s on an adapter without the role: error %v, want ErrNotSupported", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "forge.tagsOnly has no") {
			t.Errorf("%s: error %q does not name the adapter and the role", name, err)
		}
	}
}

func TestStaticResolvesToItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := Static(tagsOnly{})
	f, err := r.For(ctx, Repo{FullName: "acme/a"})
	if err != nil {
		t.Fatal(err)
	}
	if tags, err := f.ListTags(ctx, Repo{}); err != nil || len(tags) != 1 {
		t.Errorf("ListTags through Static = %v, %v", tags, err)
	}
	if _, err := r.ListRepos(ctx); !errors.Is(err, ErrNotSupported) {
		t.Errorf("ListRepos of an adapter that cannot list: %v, want ErrNotSupported", err)
	}
}

func TestUnavailableFailsEveryRoleWithItsError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cause := errors.New("no installation for acme/a")
	f := Unavailable(cause)
	if _, err := f.ReadTree(ctx, Repo{}, "main", ""); !errors.Is(err, cause) {
		t.Errorf("ReadTree = %v, want %v", err, cause)
	}
	if err := f.Dispatch(ctx, Repo{}, "x", nil); !errors.Is(err, cause) {
		t.Errorf("Dispatch = %v, want %v", err, cause)
	}
}
