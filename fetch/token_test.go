package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

func TestGitAuthScopesTheToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		url     string
		env     map[string]string
		want    string // the password sent, "" for none
		wantErr string
	}{
		{"no token", "https://git.example/a.git", nil, "", ""},
		{"configured host", "https://git.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "git.example"}, "t1", ""},
		{"configured host and port", "https://git.example:8443/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "other.example, git.example:8443"}, "t1", ""},
		{"another port", "https://git.example:9999/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "git.example:8443"}, "", ""},
		{"another host", "https://evil.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "git.example"}, "", ""},
		{"suffix is not the host", "https://git.example.evil.example/a.git", map[string]string{"GIT_TOKEN": "t2", EnvGitHosts: "git.example"}, "", ""},
		{"userinfo trick", "https://git.example@evil.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "git.example"}, "", ""},
		{"credentials in the URL win", "https://u:p@git.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "git.example"}, "", ""},
		{"plain http refused", "http://git.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "git.example"}, "", "plain http"},
		{"plain http to loopback", "http://127.0.0.1:3000/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "127.0.0.1:3000"}, "t1", ""},
		{"plain http elsewhere, token not for it", "http://evil.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", EnvGitHosts: "git.example"}, "", ""},
		{"token without hosts", "https://git.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1"}, "", EnvGitHosts},
		{"GIT_TOKEN without hosts", "https://git.example/a.git", map[string]string{"GIT_TOKEN": "t2"}, "", EnvGitHosts},
		{"GITHUB_TOKEN defaults to github.com", "https://github.com/acme/a.git", map[string]string{"GITHUB_TOKEN": "t3"}, "t3", ""},
		{"GITHUB_TOKEN not elsewhere", "https://gitlab.com/acme/a.git", map[string]string{"GITHUB_TOKEN": "t3"}, "", ""},
		{"GITHUB_TOKEN to the Actions server", "https://ghe.example/acme/a.git", map[string]string{"GITHUB_TOKEN": "t3", "GITHUB_SERVER_URL": "https://ghe.example"}, "t3", ""},
		{"first variable wins", "https://git.example/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1", "GITHUB_TOKEN": "t3", EnvGitHosts: "git.example"}, "t1", ""},
		{"not http", "file:///srv/a.git", map[string]string{"KPTBOT_GIT_TOKEN": "t1"}, "", ""},
	}
	for _, tt := range tests {
		auth, err := gitAuth(tt.url, func(k string) string { return tt.env[k] })
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		}
		got := ""
		if b, ok := auth.(*githttp.BasicAuth); ok {
			got = b.Password
		}
		if got != tt.want {
			t.Errorf("%s: token sent %q, want %q", tt.name, got, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "t1") {
			t.Errorf("%s: the error shows the token: %v", tt.name, err)
		}
	}
}

// authRecorder is a git server that only records the Authorization
// headers it is sent.
type authRecorder struct {
	mu    sync.Mutex
	auths []string
	hits  int
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.hits++
	if v := r.Header.Get("Authorization"); v != "" {
		a.auths = append(a.auths, v)
	}
	a.mu.Unlock()
	w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
	http.Error(w, "authentication required", http.StatusUnauthorized)
}

func (a *authRecorder) seen() (hits int, auths []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits, append([]string(nil), a.auths...)
}

// TestOpenSendsTheTokenOnlyToItsHost opens an upstream on a server that is
// not the token's (as a Kptfile or kptbot.yaml may name), directly and
// through a redirect from the token's own host: the token never arrives.
// Not parallel: it sets the token in the environment, as users do.
func TestOpenSendsTheTokenOnlyToItsHost(t *testing.T) {
	evil := &authRecorder{}
	evilSrv := httptest.NewServer(evil)
	defer evilSrv.Close()
	good := &authRecorder{}
	goodSrv := httptest.NewServer(good)
	defer goodSrv.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evilSrv.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer redirector.Close()
	host := func(u string) string { return strings.TrimPrefix(u, "http://") }
	t.Setenv("KPTBOT_GIT_TOKEN", "kgt_secret")
	t.Setenv(EnvGitHosts, host(goodSrv.URL)+","+host(redirector.URL))
	ctx := context.Background()

	if _, err := Open(ctx, goodSrv.URL+"/acme/pkgs.git"); err == nil {
		t.Fatal("opening a repository on the recorder succeeded")
	}
	if _, auths := good.seen(); len(auths) == 0 || !strings.HasPrefix(auths[0], "Basic ") {
		t.Fatalf("the token's own host got Authorization %q: the test cannot tell a withheld token from a broken one", auths)
	}
	for _, u := range []string{evilSrv.URL + "/acme/pkgs.git", redirector.URL + "/acme/pkgs.git"} {
		_, err := Open(ctx, u)
		if err != nil && strings.Contains(err.Error(), "kgt_secret") {
			t.Errorf("Open(%s): the error shows the token: %v", u, err)
		}
	}
	hits, auths := evil.seen()
	if hits == 0 {
		t.Fatal("the other server was never asked: the test proves nothing")
	}
	if len(auths) > 0 {
		t.Errorf("the token reached a server it is not for: Authorization %q", auths)
	}
}
