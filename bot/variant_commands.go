package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
	"github.com/kptbot/kptbot/variant"
)

// The commands that act on update changes: /kptbot recreate and
// /kptbot update [REV].

// variantNamed finds a variant targeting rc's repository by name.
func (b *Bot) variantNamed(ctx context.Context, rc *repoCtx, name string) (config.PackageVariant, bool, error) {
	vs, err := b.variantsFor(ctx, rc)
	if err != nil {
		return config.PackageVariant{}, false, err
	}
	for _, pv := range vs {
		if pv.Metadata.Name == name {
			return pv, true, nil
		}
	}
	return config.PackageVariant{}, false, nil
}

// recreate rebuilds an update change from scratch at a person's request,
// dropping commits others pushed to its branch.
func (b *Bot) recreate(ctx context.Context, rc *repoCtx, ch forge.Change, m BodyMarker) (string, error) {
	if _, ok, err := b.variantNamed(ctx, rc, m.Variant); err != nil || !ok {
		return fmt.Sprintf("The variant `%s` no longer targets this repository.", m.Variant), err
	}
	m.Head, m.Held, m.Digest = ch.HeadSHA, "", "" // consent to replace this head
	body := review.SetMarker(ch.Body, m)
	if _, err := rc.f.UpdateChange(ctx, rc.repo, ch.Number, forge.ChangeUpdate{Body: &body}); err != nil {
		return "", err
	}
	acts, err := b.reconcileVariants(ctx, rc, func(pv config.PackageVariant) bool { return pv.Metadata.Name == m.Variant })
	if err != nil {
		return "", err
	}
	for _, a := range acts {
		if a.Variant == m.Variant {
			return fmt.Sprintf("Recreated from scratch: %s.", a.Why), nil
		}
	}
	return "Nothing to recreate.", nil
}

// updateOnto merges the upstream revision (latest by the variant's policy,
// or rev) onto the change's branch as it is, keeping commits others pushed.
func (b *Bot) updateOnto(ctx context.Context, rc *repoCtx, ch forge.Change, m BodyMarker, rev string) (string, error) {
	pv, ok, err := b.variantNamed(ctx, rc, m.Variant)
	if err != nil || !ok {
		return fmt.Sprintf("The variant `%s` no longer targets this repository.", m.Variant), err
	}
	ff, err := b.fetcher(ctx, rc)
	if err != nil {
		return "", err
	}
	head, err := rc.f.ReadTree(ctx, rc.repo, ch.HeadSHA, "")
	if err != nil {
		return "", err
	}
	sources, err := variant.InjectionSources(head.Files, rc.spec.InjectionSources)
	if err != nil {
		return "", err
	}
	pkg := strings.Trim(pv.Spec.Downstream.Package, "/")
	p, err := b.planOnto(ctx, rc, ff, pv, sub(head.Files, rc.pkgDir(pkg)), rev, sources)
	if err != nil {
		return "", err
	}
	if p.Kind == "none" || p.published.Equal(p.files) {
		return fmt.Sprintf("This branch already holds %s.", p.Revision), nil
	}
	newHead, err := rc.f.PushFiles(ctx, rc.repo, ch.HeadRef, ch.HeadSHA, ch.HeadSHA, p.changedFiles(), p.commitMessage())
	if err != nil {
		return "", err
	}
	p.Change = ch.Number
	m = BodyMarker{Package: p.Package, Variant: p.Variant, UpstreamLock: p.lock, Digest: p.digest, Head: newHead}
	body := b.updateBody(p, m)
	if _, err := rc.f.UpdateChange(ctx, rc.repo, ch.Number, forge.ChangeUpdate{Body: &body}); err != nil {
		return "", err
	}
	rc.out.Updated = append(rc.out.Updated, ChangeRef{Repo: rc.repo.FullName, Number: ch.Number, Package: p.Package, Title: ch.Title, URL: ch.URL})
	msg := fmt.Sprintf("Merged %s onto this branch (your commits kept): `%s`.", p.Revision, short(newHead))
	if len(p.Conflicts) > 0 {
		msg += fmt.Sprintf(" %d conflicts: see the table in the description.", len(p.Conflicts))
	}
	return msg, nil
}
