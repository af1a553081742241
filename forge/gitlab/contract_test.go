package gitlab

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

// newFakeGitLab starts a fake GitLab serving its API under prefix and
// returns it with an adapter for it.
func newFakeGitLab(t *testing.T, prefix string, opts ...Option) (*gitlabtest.Server, *Client) {
	t.Helper()
	f := gitlabtest.New(t, gitlabtest.WithPrefix(prefix))
	c, err := NewClient(f.HTTPClient, f.URL, gitlabtest.Token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// writeJSON answers an intercepted request as GitLab would.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// gitlabHarness is the adapter plus the fake's test-only powers, for
// forgetest.Contract.
type gitlabHarness struct {
	*Client
	fake *gitlabtest.Server
	t    *testing.T
}

func (h gitlabHarness) Seed(r forge.Repo, branch string, files map[string][]byte) string {
	return h.fake.Seed(r, branch, files)
}

func (h gitlabHarness) SetPrivate(r forge.Repo, private bool) { h.fake.SetPrivate(r, private) }

// Review approves as rv.Reviewer: a GitLab approval is the only review
// the contract asks of this forge.
func (h gitlabHarness) Review(r forge.Repo, number int, rv forge.Review) {
	if rv.State != forge.ReviewApproved {
		h.t.Fatalf("fake GitLab: a review is an approval; got state %q", rv.State)
	}
	h.fake.ApproveAt(r, number, rv.Reviewer.Login, rv.CommitSHA)
}

// TestGitLabAdapterContract runs the forge contract against the adapter
// over the fake GitLab: a self-managed API root with a path prefix, and
// two items a page so every list crosses page boundaries.
func TestGitLabAdapterContract(t *testing.T) {
	t.Parallel()
	forgetest.Contract(t, func(t *testing.T) forgetest.Harness {
		f, c := newFakeGitLab(t, "/gitlab/api/v4")
		f.SetPaging(2, true)
		f.AddGroupMember("acme/platform", "alice", gitlabtest.Developer)
		return gitlabHarness{Client: c, fake: f, t: t}
	})
}
