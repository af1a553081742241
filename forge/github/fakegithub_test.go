package github

import (
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/forge/github/githubtest"
)

type githubHarness struct {
	*Client
	fake *githubtest.Server
}

func (h githubHarness) Seed(r forge.Repo, branch string, files map[string][]byte) string {
	return h.fake.Seed(r, branch, files)
}

func (h githubHarness) SetPrivate(r forge.Repo, private bool) { h.fake.SetPrivate(r, private) }

func (h githubHarness) Review(r forge.Repo, number int, rv forge.Review) {
	h.fake.Review(r, number, rv)
}

func TestGitHubAdapterContract(t *testing.T) {
	t.Parallel()
	forgetest.Contract(t, func(t *testing.T) forgetest.Harness {
		f := githubtest.New(t)
		c, err := NewClient(nil, f.URL)
		if err != nil {
			t.Fatal(err)
		}
		c.GitURL = f.GitURL
		return githubHarness{Client: c, fake: f}
	})
}
