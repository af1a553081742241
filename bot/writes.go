package bot

import (
	"context"

	"github.com/kptbot/kptbot/forge"
)

// The write budget of the bot's own changes (Options.SingleWrite): in
// standard mode each change the bot opens or moves for a variant costs
// two REST writes, the change and its check; in single mode one, the
// change, whose description then carries the render result. A check is
// still written when the base branch's protection requires it (the
// change could never merge without it) and when a render fails (it
// blocks publishing, and people must see why where they look for it).

// requiredChecks are the checks rc's default branch requires, read once
// per piece of work (a read, never a write); a failed read is reported
// as requiring every check, so doubt costs a write, never a merge.
func (rc *repoCtx) requiredChecks(ctx context.Context) []string {
	if rc.required == nil {
		req, err := rc.f.RequiredChecks(ctx, rc.repo, rc.repo.DefaultBranch)
		if err != nil {
			req = []string{forge.AnyCheck}
		}
		rc.required = append([]string{}, req...)
	}
	return rc.required
}

// checkWanted says whether the bot writes the check named name on its own
// change in rc when the render is green.
func (b *Bot) checkWanted(ctx context.Context, rc *repoCtx, name string) bool {
	if !b.opts.SingleWrite {
		return true
	}
	for _, r := range rc.requiredChecks(ctx) {
		if r == name || r == forge.AnyCheck {
			return true
		}
	}
	return false
}

// noLabels says whether changes the bot opens in r go without labels:
// in single mode on GitHub, whose create call takes no labels (they would
// be a second write); GitLab takes them in the same call.
func (b *Bot) noLabels(r forge.Repo) bool {
	return b.opts.SingleWrite && r.Forge == forge.GitHub
}
