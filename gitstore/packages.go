package gitstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/porch"
)

// The package operations porchctl's rpkg verbs run, on packages held in
// memory: every draft they write is rendered with the built-in functions
// first, as Porch renders a draft on every change.

// Latest asks for the highest published revision where a revision number
// is expected (v0 is a revision, so 0 cannot mean "none given").
const Latest = -1

// Published returns published revision n of pkg (Latest: the highest)
// and its package files.
func (s *Store) Published(ctx context.Context, pkg string, n int) (int, kptpkg.Tree, error) {
	refs, err := s.repo.Refs()
	if err != nil {
		return 0, nil, err
	}
	var i int
	if n == Latest {
		if n, i = porch.LatestOf(pkg, refs, func(r fetch.GitRef) string { return r.Name }); i < 0 {
			return 0, nil, fmt.Errorf("%w: %s has no published revision", ErrNotFound, pkg)
		}
	} else if i = slices.IndexFunc(refs, func(r fetch.GitRef) bool { return r.Name == porch.TagRef(pkg, n) }); i < 0 {
		return 0, nil, fmt.Errorf("%w: %s has no published revision %d", ErrNotFound, pkg, n)
	}
	files, err := s.repo.Tree(ctx, refs[i].Commit, "/"+pkg)
	return n, kptpkg.Tree(files), err
}

// Draft returns the package files of draft pkg/ws.
func (s *Store) Draft(ctx context.Context, pkg, ws string) (kptpkg.Tree, error) {
	r, err := s.ref(draftRef(pkg, ws))
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("%w: no draft %s/%s (branch %s)", ErrNotFound, pkg, ws, porch.DraftBranch(pkg, ws))
	}
	files, err := s.repo.Tree(ctx, r.Hash().String(), "/"+pkg)
	return kptpkg.Tree(files), err
}

// InitDraft creates draft pkg/ws holding a new package (kpt pkg init's
// files, named after pkg's last element), with Porch's init task.
func (s *Store) InitDraft(ctx context.Context, pkg, ws string, opts engine.InitOptions) (commit string, err error) {
	files, err := engine.InitTree(path.Base(pkg), opts)
	if err != nil {
		return "", err
	}
	return s.CreateDraft(ctx, pkg, ws, files, porch.InitTask(opts.Description).JSON())
}

// CloneDraft creates draft pkg/ws from an upstream package (kpt pkg get
// into the repository), rendered, with Porch's clone task. It returns the
// draft's commit and the upstream package as fetched.
func (s *Store) CloneDraft(ctx context.Context, f engine.Fetcher, pkg, ws string, opts engine.GetOptions) (string, engine.FetchedPackage, error) {
	files, res, err := engine.GetTree(ctx, f, path.Base(pkg), opts)
	if err != nil {
		return "", engine.FetchedPackage{}, err
	}
	if files, err = renderDraft(ctx, files); err != nil {
		return "", engine.FetchedPackage{}, err
	}
	up := res.Packages[0]
	commit, err := s.CreateDraft(ctx, pkg, ws, files, up.CloneTask().JSON())
	return commit, up, err
}

// CopyDraft starts draft pkg/ws from published revision n (Latest: the
// highest), to edit it, with Porch's edit task. It returns the revision
// copied.
func (s *Store) CopyDraft(ctx context.Context, pkg, ws string, n int) (int, error) {
	n, files, err := s.Published(ctx, pkg, n)
	if err != nil {
		return 0, err
	}
	_, err = s.CreateDraft(ctx, pkg, ws, files, porch.EditTask(porch.Tag(pkg, n)).JSON())
	return n, err
}

// PushDraft replaces the files of draft pkg/ws with files, rendered, as a
// patch.
func (s *Store) PushDraft(ctx context.Context, pkg, ws string, files kptpkg.Tree) (commit string, err error) {
	if files, err = renderDraft(ctx, files); err != nil {
		return "", err
	}
	return s.UpdateDraft(ctx, pkg, ws, files, porch.TypeTask(porch.TaskTypePatch).JSON())
}

// UpgradeOptions configures Upgrade.
type UpgradeOptions struct {
	// Revision is the published revision a new draft starts from when the
	// workspace is no draft (Latest: the highest).
	Revision int
	// Version is the upstream version to upgrade to (empty: the Kptfile's
	// upstream ref); Strategy overrides the Kptfile's update strategy.
	Version, Strategy string
}

// Upgraded is what Upgrade did.
type Upgraded struct {
	// From is the published revision the new draft was created from;
	// empty when an existing draft was upgraded in place.
	From string
	// To is the upstream ref the package follows now.
	To string
	// Conflicts are the fields where both sides changed and upstream won.
	Conflicts []pkgmerge.Conflict
}

// Upgrade merges a newer upstream into draft pkg/ws (3-way, as kpt pkg
// update: local edits kept, conflicts listed). When ws is no draft, the
// draft is created from a published revision with the upgrade merged, in
// one step, as porchctl's upgrade does. The commit records Porch's
// upgrade task.
func (s *Store) Upgrade(ctx context.Context, f engine.Fetcher, pkg, ws string, opts UpgradeOptions) (*Upgraded, error) {
	files, err := s.Draft(ctx, pkg, ws)
	var from string
	if errors.Is(err, ErrNotFound) {
		var n int
		if n, files, err = s.Published(ctx, pkg, opts.Revision); err != nil {
			return nil, fmt.Errorf("no draft %s/%s to upgrade, and no published revision to start one from: %w", pkg, ws, err)
		}
		from = porch.Tag(pkg, n)
	}
	if err != nil {
		return nil, err
	}
	merged, res, err := engine.UpdateTree(ctx, f, path.Base(pkg), files, engine.UpdateOptions{Version: opts.Version, Strategy: opts.Strategy})
	if err != nil {
		return nil, fmt.Errorf("upgrading %s/%s: %w", pkg, ws, err)
	}
	if merged, err = renderDraft(ctx, merged); err != nil {
		return nil, err
	}
	local := from
	if local == "" {
		local = porch.DraftBranch(pkg, ws)
	}
	task := upgradeTask(files, merged, local, opts.Strategy).JSON()
	if from == "" {
		_, err = s.UpdateDraft(ctx, pkg, ws, merged, task)
	} else {
		_, err = s.CreateDraft(ctx, pkg, ws, merged, task)
	}
	if err != nil {
		return nil, err
	}
	return &Upgraded{From: from, To: res.Packages[0].Resolved.Ref, Conflicts: res.Conflicts}, nil
}

// upgradeTask is the Porch upgrade task an upgrade records: local moved
// from the upstream its Kptfile followed before to the one it follows
// after, with the strategy asked for, else the Kptfile's, else Porch's
// default.
func upgradeTask(before, after kptpkg.Tree, local, strategy string) porch.Task {
	origin := func(t kptpkg.Tree) string {
		kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, t[kptpkg.KptfileName])
		if err != nil {
			return ""
		}
		if strategy == "" && kf.Upstream != nil {
			strategy = string(kf.Upstream.UpdateStrategy)
		}
		if o, err := kptpkg.UpstreamOf(kf); err == nil && o != nil {
			return o.String()
		}
		return ""
	}
	old, upgraded := origin(before), origin(after)
	if strategy == "" {
		strategy = string(porch.ResourceMerge)
	}
	return porch.UpgradeTask(old, upgraded, local, porch.PackageMergeStrategy(strategy))
}

// renderDraft renders a package held in memory with the built-in
// functions (exec and containers never run on a repository's behalf).
func renderDraft(ctx context.Context, files kptpkg.Tree) (kptpkg.Tree, error) {
	if _, ok := files[kptpkg.KptfileName]; !ok {
		return nil, fmt.Errorf("not a kpt package: no Kptfile")
	}
	res, err := render.RenderTree(ctx, files, render.RenderOptions{})
	if err != nil {
		return nil, fmt.Errorf("rendering the package: %w", err)
	}
	return res.Tree, nil
}
