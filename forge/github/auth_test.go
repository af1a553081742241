package github

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kptbot/kptbot/forge"
)

func TestAppClientMintsAndCachesInstallationToken(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	var mints atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /app/installations/42/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey") {
			t.Errorf("token minted without the App's JWT: %q", r.Header.Get("Authorization"))
		}
		mints.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token":"ghs_installation","expires_at":%q}`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	})
	mux.HandleFunc("GET /repos/acme/site-a/collaborators/alice/permission", func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "token ghs_installation" {
			t.Errorf("API request Authorization %q, want the installation token", got)
		}
		fmt.Fprint(w, `{"permission":"admin","role_name":"admin","user":{"login":"alice","id":1}}`)
	})
	srv := httptest.NewServer(loadAPIContract(t).Middleware(t, mux))
	t.Cleanup(srv.Close)

	c, err := NewAppClient(1234, 42, pemKey, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	site := forge.Repo{FullName: "acme/site-a"}
	for range 2 {
		if p, err := c.Permission(ctx, site, "alice"); err != nil || p != forge.PermissionAdmin {
			t.Fatalf("Permission = %v, %v", p, err)
		}
	}
	auth, err := c.GitAuth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ba, ok := auth.(*githttp.BasicAuth); !ok || ba.Username != "x-access-token" || ba.Password != "ghs_installation" {
		t.Errorf("git credentials %#v, want the installation token as x-access-token", auth)
	}
	if n := mints.Load(); n != 1 {
		t.Errorf("installation token minted %d times for three uses, want 1 (cached)", n)
	}
	if _, err := NewAppClient(1, 2, []byte("not a key"), ""); err == nil || !strings.Contains(err.Error(), "private key") {
		t.Errorf("bad key: error = %v", err)
	}
}

func TestTokenClient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer ghp_pat" {
			t.Errorf("Authorization %q", got)
		}
		fmt.Fprint(w, `{"permission":"read","user":{"login":"bob"}}`)
	}))
	t.Cleanup(srv.Close)
	c, err := NewTokenClient("ghp_pat", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.Permission(context.Background(), forge.Repo{FullName: "acme/x"}, "bob"); err != nil || p != forge.PermissionRead {
		t.Errorf("Permission = %v, %v", p, err)
	}
	if _, err := NewTokenClient(" ", ""); err == nil {
		t.Error("empty token accepted")
	}
}

func TestAppForgeRoutesByInstallation(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	var lookups atomic.Int32
	mux := http.NewServeMux()
	install := map[string]int{"acme/site-a": 42, "other/site-b": 43}
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey") {
			t.Errorf("GET /app without the App's JWT")
		}
		fmt.Fprint(w, `{"id":1234,"slug":"acme-kptbot","name":"acme kptbot","owner":{"login":"acme"}}`)
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/installation", func(w http.ResponseWriter, r *http.Request) {
		lookups.Add(1)
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey") {
			t.Errorf("installation lookup without the App's JWT")
		}
		fmt.Fprintf(w, `{"id":%d,"account":{"login":%q},"app_id":1234}`, install[r.PathValue("owner")+"/"+r.PathValue("repo")], r.PathValue("owner"))
	})
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token":"ghs_%s","expires_at":%q}`, r.PathValue("id"), time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/collaborators/alice/permission", func(w http.ResponseWriter, r *http.Request) {
		want := fmt.Sprintf("token ghs_%d", install[r.PathValue("owner")+"/"+r.PathValue("repo")])
		if got := r.Header.Get("Authorization"); got != want {
			t.Errorf("%s: Authorization %q, want %q (the repository's own installation)", r.URL.Path, got, want)
		}
		fmt.Fprint(w, `{"permission":"write","role_name":"write","user":{"login":"alice","id":1}}`)
	})
	srv := httptest.NewServer(loadAPIContract(t).Middleware(t, mux))
	t.Cleanup(srv.Close)
	var setups []int64
	a, err := NewAppForge(1234, pemKey, srv.URL, func(_ *Client, id int64) { setups = append(setups, id) })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"acme/site-a", "other/site-b", "acme/site-a"} {
		f, err := a.For(ctx, forge.Repo{FullName: name})
		if err != nil {
			t.Fatalf("For(%s): %v", name, err)
		}
		if p, err := f.Permission(ctx, forge.Repo{FullName: name}, "alice"); err != nil || p != forge.PermissionWrite {
			t.Fatalf("Permission(%s) = %v, %v", name, p, err)
		}
	}
	if n := lookups.Load(); n != 2 {
		t.Errorf("installation looked up %d times for two repositories, want 2 (cached)", n)
	}
	if len(setups) != 2 {
		t.Errorf("setup called for %v, want both installations once", setups)
	}
	if login, err := a.Login(ctx); err != nil || login != "acme-kptbot[bot]" {
		t.Errorf("Login = %q, %v; want the App's slug + [bot]", login, err)
	}
}

func TestListReposWithAPersonalToken(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /installation/repositories", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"You must authenticate with an installation access token in order to list repositories for an installation."}`)
	})
	mux.HandleFunc("GET /user/repos", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("affiliation") != "owner,collaborator,organization_member" {
			t.Errorf("affiliation = %q", r.URL.Query().Get("affiliation"))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"full_name":"acme/site-b","default_branch":"main","clone_url":"https://github.com/acme/site-b.git"},{"full_name":"acme/site-a","default_branch":"trunk"}]`)
	})
	srv := httptest.NewServer(loadAPIContract(t).Middleware(t, mux))
	t.Cleanup(srv.Close)
	c, err := NewClient(nil, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.ListRepos(context.Background())
	if err != nil || len(rs) != 2 || rs[0].FullName != "acme/site-a" || rs[0].DefaultBranch != "trunk" || rs[1].CloneURL == "" || rs[0].Forge != forge.GitHub {
		t.Fatalf("ListRepos with a PAT = %+v, %v", rs, err)
	}
}
