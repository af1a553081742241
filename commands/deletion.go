package commands

import (
	"context"
	"fmt"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/review"
)

// addRequester records login as having asked for ch's content by command:
// they count as one of its authors, so they cannot approve it.
func addRequester(ctx context.Context, b Bot, ch forge.Change, login string) error {
	return b.EditRecord(ctx, ch, func(st *review.State, _ []forge.Comment) (bool, error) {
		if st.Requested(login) {
			return false, nil
		}
		st.AddRequester(login)
		return true, nil
	})
}

// ProposeDeletion opens (once) the change that deletes package pkg: a
// branch removing its files with Porch's deletion task, proposed for
// review and published like any other change. requester is who asked
// (/kptbot delete), recorded as the change's author so they cannot approve
// it alone; "" when the bot decided it itself (a variant removed). It
// returns the reply and the change it opened (nil when none).
func ProposeDeletion(ctx context.Context, env Env, b Bot, pkg, requester string) (string, *forge.Change, error) {
	f, repo, dir := env.Forge, env.Repo, porch.PackageDir(env.Directory, pkg)
	snap, err := f.ReadTree(ctx, repo, repo.DefaultBranch, dir)
	if err != nil {
		return "", nil, err
	}
	if _, ok := snap.Files["Kptfile"]; !ok {
		return fmt.Sprintf("There is no package %s on %s.", review.Code(pkg), repo.DefaultBranch), nil, nil
	}
	tags, err := f.ListTags(ctx, repo)
	if err != nil {
		return "", nil, err
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.Name
	}
	latest, _ := porch.Latest(pkg, names)
	branch := porch.DeletionProposedBranch(pkg, latest)
	if existing, err := f.ListChangesByHead(ctx, repo, branch); err == nil {
		for _, c := range existing {
			if c.State == "open" {
				if requester != "" {
					if err := addRequester(ctx, b, c, requester); err != nil {
						return "", nil, err
					}
				}
				return fmt.Sprintf("Deletion of %s is already proposed in #%d.", review.Code(pkg), c.Number), nil, nil
			}
		}
	}
	if env.DryRun {
		return fmt.Sprintf("Would propose deleting %s.", review.Code(pkg)), nil, nil
	}
	files := map[string][]byte{}
	for p := range snap.Files {
		files[dir+"/"+p] = nil
	}
	trailer := porch.TaskTrailer(pkg, "", porch.RevisionName(latest), porch.TypeTask(porch.TaskTypeDelete))
	if _, err := f.PushFiles(ctx, repo, branch, "", snap.Commit, files, "Delete package "+pkg+"\n\n"+trailer); err != nil {
		return "", nil, err
	}
	body := fmt.Sprintf("Deletes package `%s` (latest revision %s). Publishing this change removes the package from %s.\n\n%s",
		pkg, porch.RevisionName(latest), repo.DefaultBranch, review.FormatMarker(review.BodyMarker{Package: pkg, Deletion: true}))
	labels := []string{"kptbot:deletion"}
	if env.NoLabels {
		labels = nil
	}
	ch, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: branch, Base: repo.DefaultBranch, Title: "Delete package " + pkg, Body: body, Labels: labels})
	if err != nil {
		return "", nil, err
	}
	if requester != "" {
		if err := addRequester(ctx, b, ch, requester); err != nil {
			return "", &ch, err
		}
	}
	return fmt.Sprintf("Proposed deleting %s in #%d.", review.Code(pkg), ch.Number), &ch, nil
}
