package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/engine/render"
)

// UpdateOptions configures Update.
type UpdateOptions struct {
	// Version is the new upstream ref; empty keeps the Kptfile's upstream ref
	// (so a branch ref picks up the branch's new tip).
	Version string
	// Strategy overrides the Kptfile's upstream.updateStrategy.
	Strategy string
}

// UpdateResult reports what Update did.
type UpdateResult struct {
	// Packages lists each package updated from its upstream, root first.
	Packages []FetchedPackage `json:"packages"`
	// Conflicts lists the fields where local and upstream both changed and
	// upstream won.
	Conflicts []pkgmerge.Conflict `json:"conflicts"`
	// Added, Removed and Modified list the package's files that changed.
	Added    []string `json:"added,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Modified []string `json:"modified,omitempty"`
}

// Update merges upstream changes into the package at dir, as `kpt pkg
// update`: origin is the upstreamLock commit, updated is the new ref, local
// is dir. The merge runs on a copy; dir is changed only when every package
// merged, so a failure leaves it as it was.
func Update(ctx context.Context, f Fetcher, dir string, opts UpdateOptions) (*UpdateResult, error) {
	kf, err := kptpkg.ReadKptfile(dir)
	if err != nil {
		return nil, err
	}
	have, err := kptpkg.ReadTree(dir)
	if err != nil {
		return nil, err
	}
	want, res, err := updateFiles(ctx, f, dir, kf, have, opts)
	if err != nil {
		return nil, err
	}
	if err := kptpkg.SyncDir(dir, have, want); err != nil {
		return nil, fmt.Errorf("writing the merged package to %s: %w", dir, err)
	}
	return res, nil
}

// updateFiles merges upstream changes into have, the package at dir (dir names
// it in messages; it is not read or written), whose Kptfile is kf, and
// returns the merged package.
func updateFiles(ctx context.Context, f Fetcher, dir string, kf *kptfilev1.KptFile, have kptpkg.Tree, opts UpdateOptions) (kptpkg.Tree, *UpdateResult, error) {
	up, err := kptpkg.UpstreamOf(kf)
	if err != nil {
		return nil, nil, fmt.Errorf("updating %s: %s: %w", dir, kptpkg.KptfileName, err)
	}
	if up == nil {
		return nil, nil, fmt.Errorf("updating %s: the Kptfile has no upstream (upstream.git, or a generic OCI/HTTP upstream): nothing to update from", dir)
	}
	if opts.Strategy != "" {
		if err := checkStrategy(opts.Strategy); err != nil {
			return nil, nil, err
		}
	}
	work, err := os.MkdirTemp("", "kptbot-update-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(work)
	local := filepath.Join(work, "local")
	if err := have.Write(local); err != nil {
		return nil, nil, err
	}

	u := &updater{fetcher: f, work: work, res: &UpdateResult{}, mem: kptpkg.MemTrees{}}
	originalRef := up.Ref
	if opts.Version != "" {
		up.Ref = opts.Version
	}
	strategy := kf.Upstream.UpdateStrategy
	if opts.Strategy != "" {
		strategy = kptfilev1.UpdateStrategyType(opts.Strategy)
	}
	if strategy == "" {
		strategy = kptfilev1.ResourceMerge
	}
	kptpkg.SetUpstream(kf, *up, strategy)
	if err := kptpkg.WriteKptfile(local, kf); err != nil {
		return nil, nil, err
	}

	if err := u.updateTree(ctx, local, dir, kf, originalRef, opts); err != nil {
		return nil, nil, err
	}
	// kpt finishes with merge comments on every resource. resource-merge
	// adds them to what it writes and to packages it copies in; other
	// strategies copy upstream files as they are, so only they need the
	// full pass (which rewrites every file).
	if u.otherStrategy {
		if err := addMergeComments(local); err != nil {
			return nil, nil, err
		}
	}
	want, err := kptpkg.ReadTree(local)
	if err != nil {
		return nil, nil, err
	}
	kptpkg.PreserveUntouched(have, want)
	u.res.Added, u.res.Removed, u.res.Modified = have.Changes(want)
	return want, u.res, nil
}

// updateTree updates the root package at local and then, in turn, every
// package inside it with an upstream of their own, as kpt does for remote
// subpackages. Subpackages that followed the root's old ref follow the new
// one. dir is the user's directory, for messages.
func (u *updater) updateTree(ctx context.Context, local, dir string, kf *kptfilev1.KptFile, originalRef string, opts UpdateOptions) error {
	stack := []string{"."}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := u.updateRoot(ctx, local, rel); err != nil {
			// Errors from kpt's updaters name the working copy; show the
			// user's directory instead.
			err = rewritePaths(err, local, dir)
			if rel == "." {
				return fmt.Errorf("updating %s: %w", dir, err)
			}
			return fmt.Errorf("updating %s (subpackage %s): %w", dir, rel, err)
		}
		subs, err := directSubpackages(filepath.Join(local, rel))
		if err != nil {
			return err
		}
		for _, s := range subs {
			subDir := filepath.Join(local, rel, s)
			skf, err := kptpkg.ReadKptfile(subDir)
			if err != nil {
				return err
			}
			if skf.Upstream == nil || (skf.Upstream.Git == nil && skf.Upstream.Type != kptpkg.GenericOrigin) {
				continue
			}
			// Subpackages cloned from the same git upstream at the same ref
			// move with the root, as kpt moves them.
			if skf.Upstream.Git != nil && kf.Upstream.Git != nil &&
				skf.Upstream.Git.Repo == kf.Upstream.Git.Repo && skf.Upstream.Git.Ref == originalRef &&
				strings.HasPrefix(path.Clean(skf.Upstream.Git.Directory), path.Clean(kf.Upstream.Git.Directory)) {
				if opts.Version != "" {
					skf.Upstream.Git.Ref = opts.Version
				}
				if opts.Strategy != "" {
					skf.Upstream.UpdateStrategy = kptfilev1.UpdateStrategyType(opts.Strategy)
				}
				if err := kptpkg.WriteKptfile(subDir, skf); err != nil {
					return err
				}
			}
			stack = append(stack, path.Join(rel, s))
		}
	}
	return nil
}

// rewritePaths replaces the path from with to in err's message.
func rewritePaths(err error, from, to string) error {
	msg := err.Error()
	if !strings.Contains(msg, from) {
		return err
	}
	return &rewrittenError{msg: strings.ReplaceAll(msg, from, to), err: err}
}

type rewrittenError struct {
	msg string
	err error
}

func (e *rewrittenError) Error() string { return e.msg }
func (e *rewrittenError) Unwrap() error { return e.err }

type updater struct {
	// otherStrategy is set when a strategy other than resource-merge ran.
	otherStrategy bool
	fetcher       Fetcher
	work          string
	n             int
	// mem holds the upstream trees whose YAML files are not on disk.
	mem kptpkg.MemTrees
	res *UpdateResult
}

func (u *updater) tempDir(kind string) (string, error) {
	u.n++
	d := filepath.Join(u.work, fmt.Sprintf("%s-%d", kind, u.n))
	return d, os.MkdirAll(d, 0o755)
}

// updateRoot updates the package at root/rel (which has its own upstream)
// and the packages inside it that come from the same upstream.
func (u *updater) updateRoot(ctx context.Context, root, rel string) error {
	pkgDir := filepath.Join(root, rel)
	kf, err := kptpkg.ReadKptfile(pkgDir)
	if err != nil {
		return err
	}
	up, err := kptpkg.UpstreamOf(kf)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(rel, kptpkg.KptfileName), err)
	}
	lock, err := kptpkg.LockOf(kf)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(rel, kptpkg.KptfileName), err)
	}
	updFiles, resolved, err := u.fetcher.Fetch(ctx, up.Repo, up.Dir, up.Ref)
	if err != nil {
		return fmt.Errorf("fetching upstream %s: %w", up, err)
	}
	// Only resource-merge reads upstream YAML through the reader that can
	// take it from memory.
	inMemory := kf.Upstream.UpdateStrategy == "" || kf.Upstream.UpdateStrategy == kptfilev1.ResourceMerge
	updatedDir, err := u.tempDir("updated")
	if err != nil {
		return err
	}
	if err := u.mem.Write(kptpkg.Tree(updFiles), updatedDir, inMemory); err != nil {
		return err
	}
	originDir, err := u.tempDir("origin")
	if err != nil {
		return err
	}
	if lock != nil {
		repo, dir, version := lock.FetchArgs()
		orgFiles, _, err := u.fetcher.Fetch(ctx, repo, dir, version)
		if err != nil {
			return fmt.Errorf("fetching origin %s at %s (upstreamLock): %w", lock.Origin, lock.Commit, err)
		}
		if err := u.mem.Write(kptpkg.Tree(orgFiles), originDir, inMemory); err != nil {
			return err
		}
	}
	strategy := string(kf.Upstream.UpdateStrategy)
	if strategy == "" {
		strategy = string(kptfilev1.ResourceMerge)
	}
	if err := checkStrategy(strategy); err != nil {
		return fmt.Errorf("%s: upstream.updateStrategy: %w", filepath.Join(rel, kptpkg.KptfileName), err)
	}
	if strategy != string(kptfilev1.ResourceMerge) {
		u.otherStrategy = true
	}

	if strategy != string(kptfilev1.ResourceMerge) {
		// resourceMerge adds them to the parsed resources itself.
		if err := pkgmerge.AddMergeCommentsToDirs(pkgDir, updatedDir, originDir); err != nil {
			return err
		}
	}
	localKfBefore := kf

	stack := []string{"."}
	for len(stack) > 0 {
		sub := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		lp, up, op := filepath.Join(pkgDir, sub), filepath.Join(updatedDir, sub), filepath.Join(originDir, sub)
		cs, err := updatePackage(strategy, sub, lp, up, op, sub == ".", u.mem)
		if err != nil {
			return err
		}
		u.res.Conflicts = append(u.res.Conflicts, pkgmerge.PrefixConflicts(rel, pkgmerge.PrefixConflicts(sub, cs))...)
		for _, s := range remoteSubpackages(lp, up, op) {
			stack = append(stack, path.Join(sub, s))
		}
	}

	merged, err := kptpkg.ReadKptfile(pkgDir)
	if err != nil {
		return err
	}
	if strategy == string(kptfilev1.ResourceMerge) {
		orgKf := pkgmerge.ReadKptfileOrEmpty(originDir)
		updKf := pkgmerge.ReadKptfileOrEmpty(updatedDir)
		pipe, pc := pkgmerge.MergePipeline(orgKf.Pipeline, localKfBefore.Pipeline, updKf.Pipeline)
		merged.Pipeline = pipe
		u.res.Conflicts = append(u.res.Conflicts, pkgmerge.PrefixConflicts(rel, pc)...)
	}
	kptpkg.SetUpstream(merged, *up, kf.Upstream.UpdateStrategy)
	kptpkg.SetLock(merged, kptpkg.LockFrom(*up, resolved))
	if err := kptpkg.WriteKptfile(pkgDir, merged); err != nil {
		return err
	}
	u.res.Packages = append(u.res.Packages, FetchedPackage{Path: rel, Repo: up.Repo, Dir: up.Dir, Resolved: resolved, Store: up.Store})
	return nil
}

func isPackageDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, kptpkg.KptfileName))
	return err == nil
}

// updatePackage applies kpt's rules for one package of an upstream tree:
// added, deleted or changed on either side.
func updatePackage(strategy, sub, localPath, updatedPath, originPath string, isRoot bool, mem kptpkg.MemTrees) ([]pkgmerge.Conflict, error) {
	localExists := isPackageDir(localPath)
	updatedExists, originExists := isRoot, isRoot
	if !isRoot {
		updatedExists, originExists = isPackageDir(updatedPath), isPackageDir(originPath)
	}
	if done, err := pkgmerge.ApplyPresence(sub, localPath, updatedPath, originPath, localExists, updatedExists, originExists); done || err != nil {
		return nil, err
	}
	var run func(localPath, updatedPath, originPath string, isRoot bool) error
	switch kptfilev1.UpdateStrategyType(strategy) {
	case kptfilev1.FastForward:
		run = fastForward
	case kptfilev1.ForceDeleteReplace:
		run = replacePackage
	case kptfilev1.CopyMerge:
		run = copyMerge
	default: // as kpt, anything else is resource-merge
		return pkgmerge.ResourceMerge(localPath, updatedPath, originPath, isRoot, mem)
	}
	if strategy == string(kptfilev1.FastForward) && localExists {
		// kpt (v1.0.0-beta.63 and later) ignores the last render's record
		// when looking for local changes, and drops it from the updated
		// package: it describes a render of the old version.
		if err := clearRenderRecord(localPath); err != nil {
			return nil, err
		}
	}
	if err := run(localPath, updatedPath, originPath, isRoot); err != nil {
		return nil, explainUpdateError(strategy, fmt.Errorf("%s update of package %s: %w", strategy, sub, err))
	}
	return nil, nil
}

// clearRenderRecord removes status.renderStatus and the Rendered
// condition from dir/Kptfile (and status, when nothing else is left), as
// kpt's fast-forward update does.
func clearRenderRecord(dir string) error {
	p := filepath.Join(dir, kptpkg.KptfileName)
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	if !bytes.Contains(b, []byte("renderStatus")) && !bytes.Contains(b, []byte(render.ConditionRendered)) {
		return nil
	}
	out, err := kptpkg.EditKptfile(b, func(kf *yaml.RNode) error {
		status := kf.Field("status")
		if status == nil {
			return nil
		}
		if _, err := status.Value.Pipe(yaml.Clear("renderStatus")); err != nil {
			return err
		}
		if conds := status.Value.Field("conditions"); conds != nil && conds.Value.YNode().Kind == yaml.SequenceNode {
			var kept []*yaml.Node
			for _, c := range conds.Value.YNode().Content {
				if t := yaml.NewRNode(c).Field("type"); t == nil || yaml.GetValue(t.Value) != render.ConditionRendered {
					kept = append(kept, c)
				}
			}
			conds.Value.YNode().Content = kept
			if len(kept) == 0 {
				if _, err := status.Value.Pipe(yaml.Clear("conditions")); err != nil {
					return err
				}
			}
		}
		if len(status.Value.YNode().Content) == 0 {
			_, err := kf.Pipe(yaml.Clear("status"))
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

// explainUpdateError turns fast-forward's terse refusal into advice.
func explainUpdateError(strategy string, err error) error {
	if strategy == string(kptfilev1.FastForward) && errors.Is(err, errLocalChanges) {
		return fmt.Errorf("%w: fast-forward needs an unmodified package; use --strategy resource-merge to keep local edits", err)
	}
	return err
}

// remoteSubpackages lists the direct subpackages, in any of the three
// trees, that have an upstream of their own.
func remoteSubpackages(dirs ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		subs, err := directSubpackages(d)
		if err != nil {
			continue
		}
		for _, s := range subs {
			kf, err := kptpkg.ReadKptfile(filepath.Join(d, s))
			if err != nil || kf.Upstream == nil || seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
