package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/variant"
)

// The plain-git applier: a plan's actions as Porch's lifecycle on git.

// removals turns the planner's delete and orphan decisions into actions:
// drafts and proposals are deleted, a published package's deletion is
// proposed (a person still approves it), an orphan is left alone.
func (r *reconciler) removals(ds []variant.Decision) []Action {
	var out []Action
	for _, d := range ds {
		a := Action{Variant: d.Owner, Package: d.Package, Why: d.Why}
		switch {
		case d.Kind == variant.Orphan:
			a.Kind = "none"
			a.Why += ": keeps " + d.Package + " " + d.Name
		case d.Kind != variant.Delete:
			continue
		case d.Lifecycle == porch.Published:
			a.Kind, a.revision = "propose-delete", r.packages[d.Package].latest
			a.Why += ": proposing deletion of " + d.Name
		default:
			a.Kind, a.Workspace = "delete-draft", d.Name
			a.Why += fmt.Sprintf(": deleting %s %s/%s", strings.ToLower(string(d.Lifecycle)), d.Package, d.Name)
		}
		out = append(out, a)
	}
	return out
}

// apply carries out one action on the store.
func (r *reconciler) apply(ctx context.Context, a *Action) error {
	task := a.task.JSON()
	switch a.Kind {
	case "create-draft":
		if _, err := r.store.CreateDraft(ctx, a.Package, a.Workspace, a.files, task, variant.ConflictsNote(a.Conflicts)); err != nil {
			return err
		}
		return r.stage(ctx, a)
	case "update-draft":
		if a.reject {
			if err := r.store.Reject(ctx, a.Package, a.Workspace); err != nil {
				return err
			}
		}
		if _, err := r.store.UpdateDraft(ctx, a.Package, a.Workspace, a.files, task, variant.ConflictsNote(a.Conflicts)); err != nil {
			return err
		}
		return r.stage(ctx, a)
	case "delete-draft":
		return r.store.DeleteDraft(ctx, a.Package, a.Workspace)
	case "propose-delete":
		err := r.store.ProposeDelete(ctx, a.Package, a.revision)
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil // already proposed: idempotent
		}
		return err
	}
	return nil
}

// stage takes a written draft where the variant's updatePolicy says, as
// the bot does with its change: propose moves it to proposed/, publish
// approves it as Porch does (committed onto the registered branch, tagged
// <pkg>/v<N>).
func (r *reconciler) stage(ctx context.Context, a *Action) error {
	if a.Lifecycle == porch.Draft || a.Lifecycle == "" {
		return nil
	}
	if err := r.store.Propose(ctx, a.Package, a.Workspace); err != nil {
		return fmt.Errorf("proposing %s/%s: %w", a.Package, a.Workspace, err)
	}
	if a.Lifecycle != porch.Published {
		return nil
	}
	n, err := r.store.Approve(ctx, a.Package, a.Workspace)
	if err != nil {
		return fmt.Errorf("approving %s/%s (updatePolicy publish): %w", a.Package, a.Workspace, err)
	}
	a.Published = porch.Tag(a.Package, n)
	return nil
}
