package bot

import (
	"context"
	"fmt"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
)

// addRequester records login as having asked for ch's content by command.
func (b *Bot) addRequester(ctx context.Context, rc *repoCtx, ch forge.Change, login string) error {
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil {
		return err
	}
	if w.st.Requested(login) {
		return nil
	}
	w.st.AddRequester(login)
	return b.saveStatus(ctx, w, "")
}

// proposeDeletion opens (once) the change that deletes a package.
func (b *Bot) proposeDeletion(ctx context.Context, rc *repoCtx, pkg string) (string, error) {
	return b.proposeDeletionFor(ctx, rc, pkg, "")
}

// proposeDeletionFor is proposeDeletion asked for by requester ("" when
// the bot decided it itself), who is recorded as the change's author.
func (b *Bot) proposeDeletionFor(ctx context.Context, rc *repoCtx, pkg, requester string) (string, error) {
	snap, err := rc.f.ReadTree(ctx, rc.repo, rc.repo.DefaultBranch, rc.pkgDir(pkg))
	if err != nil {
		return "", err
	}
	if _, ok := snap.Files["Kptfile"]; !ok {
		return fmt.Sprintf("There is no package %s on %s.", code(pkg), rc.repo.DefaultBranch), nil
	}
	tags, err := rc.f.ListTags(ctx, rc.repo)
	if err != nil {
		return "", err
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.Name
	}
	latest, _ := porch.Latest(pkg, names)
	branch := porch.DeletionProposedBranch(pkg, latest)
	if existing, err := rc.f.ListChangesByHead(ctx, rc.repo, branch); err == nil {
		for _, c := range existing {
			if c.State == "open" {
				if requester != "" {
					if err := b.addRequester(ctx, rc, c, requester); err != nil {
						return "", err
					}
				}
				return fmt.Sprintf("Deletion of %s is already proposed in #%d.", code(pkg), c.Number), nil
			}
		}
	}
	if b.opts.DryRun {
		return fmt.Sprintf("Would propose deleting %s.", code(pkg)), nil
	}
	files := map[string][]byte{}
	for p := range snap.Files {
		files[rc.pkgDir(pkg)+"/"+p] = nil
	}
	trailer := porch.TaskTrailer(pkg, "", porch.RevisionName(latest), porch.TypeTask(porch.TaskTypeDelete))
	if _, err := rc.f.PushFiles(ctx, rc.repo, branch, "", snap.Commit, files, "Delete package "+pkg+"\n\n"+trailer); err != nil {
		return "", err
	}
	body := fmt.Sprintf("Deletes package `%s` (latest revision %s). Publishing this change removes the package from %s.\n\n%s",
		pkg, porch.RevisionName(latest), rc.repo.DefaultBranch, FormatMarker(BodyMarker{Package: pkg, Deletion: true}))
	ch, err := rc.f.OpenChange(ctx, rc.repo, forge.ChangeSpec{Head: branch, Base: rc.repo.DefaultBranch, Title: "Delete package " + pkg, Body: body, Labels: []string{"kptbot:deletion"}})
	if err != nil {
		return "", err
	}
	rc.out.Opened = append(rc.out.Opened, ChangeRef{Repo: rc.repo.FullName, Number: ch.Number, Package: pkg, Title: ch.Title, URL: ch.URL})
	if requester != "" {
		if err := b.addRequester(ctx, rc, ch, requester); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Proposed deleting %s in #%d.", code(pkg), ch.Number), nil
}
