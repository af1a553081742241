package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/index"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/variant"
)

// VariantAction is what the bot did (or would do) for one variant.
type VariantAction struct {
	Repo    string `json:"repo"`
	Variant string `json:"variant"`
	Package string `json:"package"`
	// Kind is clone, update, edit, none, skip, held or delete.
	Kind     string `json:"kind"`
	Why      string `json:"why"`
	Change   int    `json:"change,omitempty"`
	Revision string `json:"revision,omitempty"`
	// Conflicts are fields where local and upstream both changed and
	// upstream won (the change is opened as a draft when there are any).
	Conflicts []pkgmerge.Conflict `json:"conflicts,omitempty"`
}

// plannedVariant is a variant's desired package and how it got there.
type plannedVariant struct {
	VariantAction
	// stage is the planner's: a draft, ready (proposed) or merged
	// (published) change.
	stage     porch.Lifecycle
	pv        config.PackageVariant
	pkgDir    string
	files     kptpkg.Tree // rendered desired package
	published kptpkg.Tree // the package on the default branch
	lock      string
	digest    string
	diff      check.ResourceDiff
	fromRev   string
	// log is the upstream's commits from fromRev to Revision.
	log []forge.Commit
	// task is the Porch task the update commit records (clone, upgrade;
	// none: the variant's edit).
	task porch.Task
	// noCheck: the change's description is its render report (single
	// write mode), no check is written.
	noCheck bool
}

// reconcileVariants converges every variant targeting rc's repository:
// clone, update or edit changes, one open change per package, deletion
// changes for packages whose variant is gone. only, when set, limits the
// work to variants following that upstream package.
func (b *Bot) reconcileVariants(ctx context.Context, rc *repoCtx, only func(config.PackageVariant) bool) ([]VariantAction, error) {
	vs, err := b.variantsFor(ctx, rc)
	if err != nil {
		return nil, err
	}
	ff, err := b.fetcher(ctx, rc)
	if err != nil {
		return nil, err
	}
	main, err := rc.f.ReadTree(ctx, rc.repo, rc.repo.DefaultBranch, "")
	if err != nil {
		return nil, err
	}
	sources, err := variant.InjectionSources(main.Files, rc.spec.InjectionSources)
	if err != nil {
		return nil, err
	}
	open, err := rc.f.ListOpenChanges(ctx, rc.repo)
	if err != nil {
		return nil, err
	}
	openUpdates := 0
	for _, c := range open {
		if m, ok := ParseMarker(c.Body); ok && m.Variant != "" && isSelf(c.Author, b.login(rc.repo.Forge)) {
			openUpdates++
		}
	}
	var acts []VariantAction
	var errs []error
	for _, pv := range vs {
		if only != nil && !only(pv) {
			continue
		}
		p, err := b.planVariant(ctx, rc, ff, pv, main, sources)
		if err != nil {
			errs = append(errs, fmt.Errorf("variant %s: %w", pv.Metadata.Name, err))
			rc.out.Problems = append(rc.out.Problems, Problem{Severity: SeverityError, Repo: rc.repo.FullName, Package: pv.Spec.Downstream.Package, File: rc.cfgPath, Message: fmt.Sprintf("variant %s: %v", pv.Metadata.Name, err)})
			continue
		}
		if p.Kind == "clone" || p.Kind == "update" || p.Kind == "edit" {
			if err := b.applyVariant(ctx, rc, main.Commit, p, &openUpdates); err != nil {
				errs = append(errs, fmt.Errorf("variant %s: %w", pv.Metadata.Name, err))
			}
		}
		acts = append(acts, p.VariantAction)
	}
	if only == nil {
		del, err := b.removals(ctx, rc, main.Files, vs, open)
		errs = append(errs, err)
		acts = append(acts, del...)
	}
	return acts, errors.Join(errs...)
}

// planVariant computes a variant's desired package: the upstream cloned
// (first time) or the published package 3-way merged with the upstream
// revision, then the variant's mutations, then rendered.
func (b *Bot) planVariant(ctx context.Context, rc *repoCtx, ff *index.Fetcher, pv config.PackageVariant, main forge.Snapshot, sources []*yaml.RNode) (*plannedVariant, error) {
	pkg := strings.Trim(pv.Spec.Downstream.Package, "/")
	return b.planOnto(ctx, rc, ff, pv, sub(main.Files, rc.pkgDir(pkg)), "", sources)
}

// planOnto plans a variant from base (the package as it is where the
// change will land: the default branch, or an update branch a human
// pushed to) with the planner; revision overrides the variant's revision
// policy. The bot adds what its change shows: the diff, the digest, the
// upstream's log.
func (b *Bot) planOnto(ctx context.Context, rc *repoCtx, ff *index.Fetcher, pv config.PackageVariant, base kptpkg.Tree, revision string, sources []*yaml.RNode) (*plannedVariant, error) {
	pkg := strings.Trim(pv.Spec.Downstream.Package, "/")
	p := &plannedVariant{VariantAction: VariantAction{Repo: rc.repo.FullName, Variant: pv.Metadata.Name, Package: pkg}, pv: pv, pkgDir: rc.pkgDir(pkg), published: base}
	in := variant.Input{Variant: pv, Published: base, Sources: sources, ForDeployment: rc.spec.Deployment, Revision: revision}
	if ix, ok := ff.Lookup(pv.Spec.Upstream.Repo); ok && ix.Repo.CloneURL != "" {
		in.UpstreamRepo = ix.Repo.CloneURL // recorded in the Kptfile, so kpt can update it too
	}
	plan, err := variant.Make(ctx, ff, in)
	if err != nil {
		return nil, err
	}
	p.Kind, p.Why, p.Revision, p.Conflicts = string(plan.Kind), plan.Why, plan.Revision, plan.Conflicts
	p.files, p.lock, p.task, p.fromRev = plan.Tree, plan.Lock, plan.Task, plan.FromRevision
	p.stage = variant.Stage(pv.Spec.UpdatePolicy, plan)
	up := pv.Spec.Upstream
	switch plan.Kind {
	case variant.Skip:
		return p, nil
	case variant.Clone:
		// the change's title, as people know it
		p.Why = fmt.Sprintf("clone %s/%s %s", up.Repo, strings.Trim(up.Package, "/"), p.Revision)
	case variant.Upgrade:
		// the change's title shows the range
		p.Kind = "update"
		p.Why = fmt.Sprintf("update %s/%s %s → %s", up.Repo, strings.Trim(up.Package, "/"), p.fromRev, p.Revision)
		p.log = ff.Log(ctx, up, p.fromRev, p.Revision)
		// the local revision costs a tag listing: asked only for an upgrade
		p.task.Upgrade.LocalPackageRevisionRef.Name = localRevision(ctx, rc, pkg)
	}
	p.digest = check.DigestTree(p.files)
	p.diff = check.DiffResources(p.published, p.files)
	return p, nil
}

// applyVariant pushes the desired package to the package's update branch
// and opens or updates its one change: one git push plus one REST write
// for the change and one for the check.
func (b *Bot) applyVariant(ctx context.Context, rc *repoCtx, mainSHA string, p *plannedVariant, openUpdates *int) error {
	branch := porch.UpdateBranch(p.Package)
	cur, oldSHA, proceed, err := b.updateTarget(ctx, rc, branch, p, *openUpdates)
	if err != nil || !proceed || b.opts.DryRun {
		return err
	}
	head, err := rc.f.PushFiles(ctx, rc.repo, branch, oldSHA, mainSHA, p.changedFiles(), p.commitMessage())
	if err != nil {
		return err
	}
	draft := p.stage == porch.Draft
	rep := forge.CheckReport{Name: checkPrefix + p.Package, HeadSHA: head, Status: forge.CheckCompleted, Conclusion: forge.CheckSuccess, Title: "rendered", Summary: p.diff.Summary()}
	p.noCheck = !b.checkWanted(ctx, rc, rep.Name)
	if err := b.upsertUpdateChange(ctx, rc, p, cur, branch, head, draft, openUpdates); err != nil {
		return err
	}
	rc.out.Checks = append(rc.out.Checks, CheckRef{Repo: rc.repo.FullName, Name: rep.Name, SHA: head, Conclusion: string(rep.Conclusion), Package: p.Package, Summary: rep.Title})
	if !p.noCheck {
		if err := rc.f.ReportCheck(ctx, rc.repo, rep); err != nil {
			return err
		}
	}
	if p.stage == porch.Published {
		return b.publishUpdate(ctx, rc, p, head)
	}
	return nil
}

// updateTarget finds the package's open update change and decides whether
// the bot may move its branch: not when paused, not when someone else
// pushed to it (said once), not when it already holds the desired
// package, and no new change beyond maxOpenUpdates. oldSHA is the branch's
// current tip, the lease for the push ("" when there is no branch).
func (b *Bot) updateTarget(ctx context.Context, rc *repoCtx, branch string, p *plannedVariant, openUpdates int) (cur *forge.Change, oldSHA string, proceed bool, err error) {
	changes, err := rc.f.ListChangesByHead(ctx, rc.repo, branch)
	if err != nil {
		return nil, "", false, err
	}
	for i := range changes {
		if changes[i].State == "open" {
			cur = &changes[i]
		}
	}
	if cur == nil {
		if openUpdates >= rc.spec.MaxOpenUpdates {
			p.Kind, p.Why = "skip", fmt.Sprintf("%d update changes are open (spec.maxOpenUpdates): waiting", openUpdates)
			return nil, "", false, nil
		}
		brs, err := rc.f.ListBranches(ctx, rc.repo)
		if err != nil {
			return nil, "", false, err
		}
		for _, br := range brs {
			if br.Name == branch {
				oldSHA = br.SHA // a branch left by a closed change: replaced
			}
		}
		return nil, oldSHA, true, nil
	}
	p.Change = cur.Number
	if !isSelf(cur.Author, b.login(rc.repo.Forge)) {
		// A description's marker is text its author wrote: only the bot's
		// own change is the bot's to move, a person's is left alone.
		p.Kind, p.Why = "held", fmt.Sprintf("#%d on the update branch was not opened by the bot", cur.Number)
		return cur, "", false, nil
	}
	marker, _ := ParseMarker(cur.Body)
	ours := true
	if marker.Head != "" && cur.HeadSHA != marker.Head {
		if ours, err = b.pushedByBot(ctx, rc, cur.HeadSHA, p); err != nil {
			return cur, "", false, err
		}
	}
	switch {
	case marker.Paused:
		p.Kind, p.Why = "skip", fmt.Sprintf("#%d is paused", cur.Number)
		return cur, "", false, nil
	case !ours:
		p.Kind, p.Why = "held", fmt.Sprintf("#%d has commits the bot did not push; comment /%s recreate or /%s update", cur.Number, b.opts.Name, b.opts.Name)
		if marker.Held == cur.HeadSHA || b.opts.DryRun {
			return cur, "", false, nil
		}
		marker.Held = cur.HeadSHA
		body := b.updateBody(p, marker)
		if _, err := rc.f.UpdateChange(ctx, rc.repo, cur.Number, forge.ChangeUpdate{Body: &body}); err != nil {
			return cur, "", false, err
		}
		return cur, "", false, b.reply(ctx, rc, cur.Number, fmt.Sprintf("Upstream moved (%s), but this branch has commits kptbot did not push (head `%s`), so kptbot left it alone. Comment `/%s update` to merge the new upstream onto them, or `/%s recreate` to rebuild the branch from scratch (dropping them).", p.Why, short(cur.HeadSHA), b.opts.Name, b.opts.Name))
	case marker.Digest == p.digest:
		p.Kind, p.Why = "none", fmt.Sprintf("#%d already holds %s", cur.Number, p.Revision)
		return cur, "", false, nil
	}
	return cur, cur.HeadSHA, true, nil
}

// upsertUpdateChange opens the update change, or retitles and re-describes
// the open one (and makes it a draft when the update has conflicts).
func (b *Bot) upsertUpdateChange(ctx context.Context, rc *repoCtx, p *plannedVariant, cur *forge.Change, branch, head string, draft bool, openUpdates *int) error {
	marker := BodyMarker{Package: p.Package, Variant: p.Variant, UpstreamLock: p.lock, Digest: p.digest, Head: head}
	title := fmt.Sprintf("kptbot: %s %s", p.Package, p.Why)
	body := b.updateBody(p, marker)
	if cur == nil {
		c, err := rc.f.OpenChange(ctx, rc.repo, forge.ChangeSpec{Head: branch, Base: rc.repo.DefaultBranch, Title: title, Body: body, Draft: draft})
		if errors.Is(err, forge.ErrConflict) {
			// Another replica opened it between our look and our push,
			// which moved its branch: our push is the head, so ours is
			// the marker.
			if cur, err = openChangeFor(ctx, rc, branch); err == nil && cur != nil {
				return b.upsertUpdateChange(ctx, rc, p, cur, branch, head, draft, openUpdates)
			}
			return errors.Join(err, fmt.Errorf("opening the update change for %s: %w", branch, forge.ErrConflict))
		}
		if err != nil {
			return err
		}
		*openUpdates++
		p.Change = c.Number
		rc.out.Opened = append(rc.out.Opened, ChangeRef{Repo: rc.repo.FullName, Number: c.Number, Package: p.Package, Title: title, URL: c.URL})
		return nil
	}
	u := forge.ChangeUpdate{Title: &title, Body: &body}
	if draft && !cur.Draft {
		u.Draft = &draft
	}
	if _, err := rc.f.UpdateChange(ctx, rc.repo, cur.Number, u); err != nil {
		return err
	}
	rc.out.Updated = append(rc.out.Updated, ChangeRef{Repo: rc.repo.FullName, Number: cur.Number, Package: p.Package, Title: title, URL: cur.URL})
	return nil
}

// changedFiles are the repository paths the push writes: the desired
// package, and deletions of files it no longer has.
func (p *plannedVariant) changedFiles() map[string][]byte {
	files := map[string][]byte{}
	for f, c := range p.files {
		files[p.pkgDir+"/"+f] = c
	}
	for f := range p.published {
		if _, ok := p.files[f]; !ok {
			files[p.pkgDir+"/"+f] = nil
		}
	}
	return files
}

// commitMessage is the update commit's message, with Porch's trailer.
func (p *plannedVariant) commitMessage() string {
	return fmt.Sprintf("%s: %s\n\n%s", p.Package, p.Why, trailerFor(p))
}

// publishUpdate merges an update change whose variant's updatePolicy is
// publish: the repository's owner pre-approved such updates in
// kptbot.yaml, so the bot merges once the render is green.
func (b *Bot) publishUpdate(ctx context.Context, rc *repoCtx, p *plannedVariant, head string) error {
	ch, err := rc.f.GetChange(ctx, rc.repo, p.Change)
	if err != nil {
		return err
	}
	w := &work{rc: rc, ch: ch, results: []check.Result{{Name: p.Package, Dir: p.pkgDir, OK: true}}}
	sha, err := rc.f.Merge(ctx, rc.repo, ch.Number, head, rc.spec.MergeMethod)
	if err != nil {
		if errors.Is(err, forge.ErrNotMergeable) || errors.Is(err, forge.ErrConflict) {
			p.Why += " (publish deferred: " + err.Error() + ")"
			return nil
		}
		return err
	}
	rc.out.Merged = append(rc.out.Merged, ChangeRef{Repo: rc.repo.FullName, Number: ch.Number, Package: p.Package, Title: ch.Title, URL: ch.URL})
	w.ch.Merged, w.ch.MergeCommitSHA, w.ch.HeadSHA = true, sha, head
	return b.finishPublish(ctx, w, w.results, []string{"updatePolicy: publish (" + p.Variant + ")"})
}

func (b *Bot) updateBody(p *plannedVariant, m BodyMarker) string {
	var s strings.Builder
	up := p.pv.Spec.Upstream
	fmt.Fprintf(&s, "This change is maintained by kptbot for the PackageVariant `%s`.\n\n", p.Variant)
	fmt.Fprintf(&s, "| | |\n|---|---|\n| upstream | `%s` package `%s` |\n| revision | %s |\n| lock | `%s` |\n| strategy | %s |\n\n",
		up.Repo, strings.Trim(up.Package, "/"), revRange(p.fromRev, p.Revision), short(p.lock), strategyOf(p.published))
	if len(p.Conflicts) > 0 {
		s.WriteString("### Conflicts (local and upstream both changed; upstream won)\n\n| file | resource | field | local | upstream |\n|---|---|---|---|---|\n")
		for _, c := range p.Conflicts {
			fmt.Fprintf(&s, "| %s | %s | %s | %s | %s |\n", code(c.File), code(c.Resource), code(c.Field), code(truncate(c.Local, 80)), code(truncate(c.Upstream, 80)))
		}
		s.WriteString("\nThe change is a draft until someone checks these.\n\n")
	}
	if len(p.log) > 0 {
		fmt.Fprintf(&s, "### Upstream changes %s\n\n", revRange(p.fromRev, p.Revision))
		for i, c := range p.log {
			if i == 20 {
				fmt.Fprintf(&s, "- … and %d more\n", len(p.log)-i)
				break
			}
			fmt.Fprintf(&s, "- `%s` %s\n", short(c.SHA), userText(firstLine(c.Message)))
		}
		s.WriteString("\n")
	}
	s.WriteString("### Rendered resources\n\n" + p.diff.Summary() + "\n\n")
	if p.noCheck {
		fmt.Fprintf(&s, "✅ `%s%s` rendered. This description is its report: kptbot writes no check for it (the server's `writeMode` is `single` and the base branch's protection does not require it).\n\n", checkPrefix, p.Package)
	}
	fmt.Fprintf(&s, "Commands: `/kptbot pause`, `/kptbot update [REV]`, `/kptbot recreate`.\n\n%s", FormatMarker(m))
	return s.String()
}

func revRange(from, to string) string {
	if from == "" || from == to {
		return to
	}
	return from + " → " + to
}

func strategyOf(t kptpkg.Tree) string {
	if kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, t[kptpkg.KptfileName]); err == nil && kf.Upstream != nil && kf.Upstream.UpdateStrategy != "" {
		return string(kf.Upstream.UpdateStrategy)
	}
	return "resource-merge"
}

func trailerFor(p *plannedVariant) string {
	task := p.task
	if task.Type == porch.TaskTypeNone {
		task = porch.VariantEditTask(p.Variant)
	}
	return porch.TaskTrailer(p.Package, porch.UpdateWorkspace, "", task)
}

// localRevision names the published revision whose local changes an
// upgrade carries: pkg's latest tag (pkg itself when it has none or the
// tags cannot be listed: the trailer records, it never stops an update).
func localRevision(ctx context.Context, rc *repoCtx, pkg string) string {
	tags, err := rc.f.ListTags(ctx, rc.repo)
	if err != nil {
		return pkg
	}
	if n, i := porch.LatestOf(pkg, tags, func(t forge.Tag) string { return t.Name }); i >= 0 {
		return porch.Tag(pkg, n)
	}
	return pkg
}

// removals applies the planner's decisions about revisions whose variant
// is gone or now targets another package: a published package's deletion
// is proposed (deletionPolicy delete) or kept (orphan); the bot's open
// update change for it is closed and its branch deleted (delete) or left
// (orphan), as Porch deletes a removed variant's drafts and proposals.
func (b *Bot) removals(ctx context.Context, rc *repoCtx, files map[string][]byte, vs []config.PackageVariant, open []forge.Change) ([]VariantAction, error) {
	var revs []variant.Revision
	for _, dir := range rc.packagesIn(files) {
		t := sub(files, dir)
		revs = append(revs, variant.Revision{Package: rc.pkgName(dir), Name: rc.pkgName(dir), Lifecycle: porch.Published,
			Owner: variant.Owner(t), DeletionPolicy: variant.DeletionPolicy(t)})
	}
	declared := map[string]bool{}
	for _, pv := range vs {
		declared[pv.Metadata.Name] = true
	}
	changes := map[string]forge.Change{}
	for _, c := range open {
		m, ok := ParseMarker(c.Body)
		if !ok || m.Variant == "" || !isSelf(c.Author, b.login(rc.repo.Forge)) {
			continue
		}
		r := variant.Revision{Package: m.Package, Name: fmt.Sprintf("#%d", c.Number), Lifecycle: porch.Proposed, Owner: m.Variant}
		if !declared[m.Variant] {
			// the variant is gone: its policy is remembered on the package
			snap, err := rc.f.ReadTree(ctx, rc.repo, c.HeadSHA, rc.pkgDir(m.Package))
			if err != nil {
				return nil, err
			}
			r.DeletionPolicy = variant.DeletionPolicy(snap.Files)
		}
		changes[r.Name] = c
		revs = append(revs, r)
	}
	var acts []VariantAction
	var errs []error
	for _, d := range variant.Decide(vs, revs) {
		a := VariantAction{Repo: rc.repo.FullName, Variant: d.Owner, Package: d.Package, Why: d.Why}
		switch {
		case d.Kind == variant.Orphan:
			a.Kind = "none"
			a.Why += " keeps " + d.Name
		case d.Kind != variant.Delete:
			continue
		case d.Lifecycle == porch.Published:
			a.Kind = "delete"
			msg, err := b.proposeDeletion(ctx, rc, d.Package)
			errs = append(errs, err)
			a.Why += ": " + msg
		default:
			c := changes[d.Name]
			a.Kind, a.Change = "delete", c.Number
			a.Why += ": closing " + d.Name
			errs = append(errs, b.dropUpdateChange(ctx, rc, c))
		}
		acts = append(acts, a)
	}
	return acts, errors.Join(errs...)
}

// dropUpdateChange closes the bot's update change c and deletes its
// branch (only if it is still where the change says).
func (b *Bot) dropUpdateChange(ctx context.Context, rc *repoCtx, c forge.Change) error {
	if b.opts.DryRun {
		return nil
	}
	if err := rc.f.CloseChange(ctx, rc.repo, c.Number); err != nil {
		return fmt.Errorf("closing #%d: %w", c.Number, err)
	}
	if err := rc.f.DeleteBranch(ctx, rc.repo, c.HeadRef, c.HeadSHA); err != nil && !errors.Is(err, forge.ErrNotFound) {
		return fmt.Errorf("deleting branch %s of #%d: %w", c.HeadRef, c.Number, err)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
