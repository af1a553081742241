package fetch

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kptbot/kptbot/fetch/locator"
)

// TokenEnv names the environment variables consulted, in order, for an
// https token when the URL carries no credentials.
var TokenEnv = []string{"KPTBOT_GIT_TOKEN", "GIT_TOKEN", "GITHUB_TOKEN"}

// EnvGitHosts names the hosts (host or host:port, comma-separated) the git
// token is for. The token goes to those hosts only, and only over https
// (or plain http to a loopback address), as the registry and archive
// credentials do: a Kptfile or kptbot.yaml naming some other server as
// an upstream must not receive it. Without it a token from GITHUB_TOKEN
// is for github.com and the host of GITHUB_SERVER_URL (set by GitHub
// Actions); a token from the other variables is an error when an http(s)
// repository is opened.
const EnvGitHosts = "KPTBOT_GIT_HOSTS"

// AuthFor returns the credentials to use for repoURL: the token from the
// environment (TokenEnv) when repoURL is an http(s) URL without
// credentials of its own on a host the token is for (EnvGitHosts), else
// nil. Open reports a misconfiguration as an error; here it means nil.
func AuthFor(repoURL string) transport.AuthMethod {
	auth, err := gitAuth(repoURL, os.Getenv)
	if err != nil {
		return nil
	}
	return auth
}

// gitAuth decides whether repoURL gets the environment's git token.
func gitAuth(repoURL string, getenv func(string) string) (transport.AuthMethod, error) {
	pu, err := url.Parse(repoURL)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.User != nil {
		return nil, nil // not http(s), or credentials in the URL, which go-git uses directly
	}
	env, tok := "", ""
	for _, e := range TokenEnv {
		if v := getenv(e); v != "" {
			env, tok = e, v
			break
		}
	}
	if tok == "" {
		return nil, nil
	}
	hosts, err := tokenHosts(env, getenv)
	if err != nil {
		return nil, err
	}
	if !locator.HostIn(pu.Host, hosts) {
		return nil, nil // another server: anonymous, as for a public repository
	}
	if pu.Scheme == "http" && !locator.PlainHTTPAllowed(pu.Host, nil) {
		return nil, fmt.Errorf("opening %s: refusing to send %s over plain http to %s (only loopback addresses may be reached without TLS with a token): use https", redact(repoURL), env, pu.Host)
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: tok}, nil
}

// tokenHosts is the hosts the token from env is for.
func tokenHosts(env string, getenv func(string) string) ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(getenv(EnvGitHosts), ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) > 0 {
		return hosts, nil
	}
	if env != "GITHUB_TOKEN" {
		return nil, fmt.Errorf("%s is set but %s is not: name the host(s) the token is for, so it is never sent to another server", env, EnvGitHosts)
	}
	hosts = []string{"github.com"}
	if su, err := url.Parse(getenv("GITHUB_SERVER_URL")); err == nil && su.Host != "" {
		hosts = append(hosts, su.Host)
	}
	return hosts, nil
}
