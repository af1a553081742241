package forgetest

import (
	"context"
	"errors"
	"reflect"
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

func TestFakeRecordsChecksAndDispatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := New()
	repo := forge.Repo{FullName: "acme/x"}
	sha := f.Seed(repo, "main", map[string][]byte{"a": []byte("1")})
	want := forge.CheckReport{Name: "kptbot/render", HeadSHA: sha, Status: forge.CheckInProgress}
	if err := f.ReportCheck(ctx, repo, want); err != nil {
		t.Fatal(err)
	}
	if got, ok := f.Check(repo, sha, "kptbot/render"); !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Check = %+v, %v; want %+v", got, ok, want)
	}
	if err := f.Dispatch(ctx, repo, "upstream-tag", map[string]any{"tag": "v1"}); err != nil {
		t.Fatal(err)
	}
	if d := f.Dispatches(); len(d) != 1 || d[0].EventType != "upstream-tag" || d[0].Payload["tag"] != "v1" {
		t.Errorf("Dispatches = %+v", d)
	}
}
