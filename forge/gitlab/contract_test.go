package gitlab

import (
	"testing"

	"github.com/kptbot/kptbot/forge/forgetest"
)

// TestGitLabAdapterContract runs the forge contract against the adapter
// over the fake GitLab: a self-managed API root with a path prefix, and
// two items a page so every list crosses page boundaries.
func TestGitLabAdapterContract(t *testing.T) {
	t.Parallel()
	forgetest.Contract(t, func(t *testing.T) forgetest.Harness {
		f, c := newFakeGitLab(t, "/gitlab/api/v4")
		f.maxPerPage = 2
		f.addGroupMember("acme/platform", "alice", 30)
		return gitlabHarness{Client: c, fake: f}
	})
}
