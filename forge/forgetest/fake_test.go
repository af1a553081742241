package forgetest

import (
	"context"
	"errors"
	"testing"

	"github.com/kptbot/kptbot/forge"
)

func TestFakeContract(t *testing.T) {
	t.Parallel()
	Contract(t, func(*testing.T) Harness { return New() })
}

func TestFakeFail(t *testing.T) {
	t.Parallel()
	f := New()
	repo := forge.Repo{FullName: "acme/x"}
	f.Seed(repo, "main", map[string][]byte{"a": []byte("1")})
	boom := errors.New("boom")
	f.Fail("ReadFile", boom)
	if _, err := f.ReadFile(context.Background(), repo, "main", "a"); !errors.Is(err, boom) {
		t.Fatalf("ReadFile with injected failure: %v", err)
	}
	f.Fail("ReadFile", nil)
	if _, err := f.ReadFile(context.Background(), repo, "main", "a"); err != nil {
		t.Fatalf("ReadFile after clearing failure: %v", err)
	}
}

func TestFakePermissions(t *testing.T) {
	t.Parallel()
	f := New()
	repo := forge.Repo{FullName: "acme/x"}
	f.Perms["acme/x:alice"] = forge.PermissionWrite
	for login, want := range map[string]forge.Permission{"alice": forge.PermissionWrite, "mallory": forge.PermissionRead} {
		got, err := f.Permission(context.Background(), repo, login)
		if err != nil || got != want {
			t.Errorf("Permission(%s) = %v, %v; want %v", login, got, err, want)
		}
	}
}
