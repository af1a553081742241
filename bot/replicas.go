package bot

import (
	"context"
	"strings"
)

// pushedByBot reports whether head, the tip of a variant's update branch
// that its change's marker does not name, is the bot's own push all the
// same: one commit on the default branch carrying this variant's trailer.
// That is what a replica leaves when it dies (or loses a race with
// another) between pushing the branch and recording the head on the
// change; the next reconcile carries on instead of holding the change as
// if a person had pushed to it. Anything else, or a failure to tell, is a
// person's.
func (b *Bot) pushedByBot(ctx context.Context, rc *repoCtx, head string, p *plannedVariant) bool {
	commits, err := rc.f.Log(ctx, rc.repo, rc.repo.DefaultBranch, head)
	if err != nil || len(commits) != 1 || commits[0].SHA != head {
		return false
	}
	return strings.HasSuffix(strings.TrimSpace(commits[0].Message), trailerFor(p))
}
