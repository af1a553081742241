package bot

import (
	"context"
	"fmt"

	"github.com/kptbot/kptbot/porch"
)

// pushedByBot reports whether head, the tip of a variant's update branch
// that its change's marker does not name, is the bot's own push all the
// same: one commit on the default branch carrying this package's update
// trailer.
// That is what a replica leaves when it dies (or loses a race with
// another) between pushing the branch and recording the head on the
// change; the next reconcile carries on instead of holding the change as
// if a person had pushed to it. Anything else, or a failure to tell, is a
// person's.
func (b *Bot) pushedByBot(ctx context.Context, rc *repoCtx, head string, p *plannedVariant) (bool, error) {
	commits, err := rc.f.Log(ctx, rc.repo, rc.repo.DefaultBranch, head)
	if err != nil {
		// Not knowing is not a person's push: holding the change on a
		// transient failure would hold it for good.
		return false, fmt.Errorf("reading the commits of %s's update branch: %w", p.Package, err)
	}
	if len(commits) != 1 || commits[0].SHA != head {
		return false, nil
	}
	// The task in the trailer depends on what the pushing replica saw
	// (the tags it listed, the revision it fetched), so the trailer is
	// matched by package and the update workspace, not byte for byte.
	t, found, err := porch.ParseTrailer(commits[0].Message)
	return found && err == nil && t.Package == p.Package && t.WorkspaceName == porch.UpdateWorkspace, nil
}
