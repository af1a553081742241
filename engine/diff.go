package engine

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/textdiff"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// Diff types, as `kpt pkg diff --diff-type`.
const (
	DiffLocal    = "local"    // upstream at the locked version → local package
	DiffRemote   = "remote"   // upstream at the locked version → upstream at VERSION
	DiffCombined = "combined" // upstream at VERSION → local package
	Diff3Way     = "3way"     // local and remote changes, one after the other
)

// DiffOptions configures Diff.
type DiffOptions struct {
	// Version is the upstream version to compare with; empty means the
	// locked commit.
	Version string
	// Type is one of DiffLocal (default), DiffRemote, DiffCombined, Diff3Way.
	Type string
	// Context is the number of context lines (default 3).
	Context int
}

// Diff returns the differences between a local package and its upstream as
// a unified diff, with no external tool. Kptfile fields that always differ
// (metadata.name, upstream, upstreamLock) and kpt-merge bookkeeping are
// normalized away so only real changes show.
func Diff(ctx context.Context, f Fetcher, dir string, opts DiffOptions) (string, error) {
	if opts.Type == "" {
		opts.Type = DiffLocal
	}
	if opts.Context == 0 {
		opts.Context = 3
	}
	switch opts.Type {
	case DiffLocal, DiffRemote, DiffCombined, Diff3Way:
	default:
		return "", fmt.Errorf("unknown diff type %q: expected local, remote, combined or 3way", opts.Type)
	}
	kf, err := kptpkg.ReadKptfile(dir)
	if err != nil {
		return "", err
	}
	up, err := kptpkg.UpstreamOf(kf)
	if err != nil {
		return "", fmt.Errorf("diffing %s: %w", dir, err)
	}
	lock, err := kptpkg.LockOf(kf)
	if err != nil {
		return "", fmt.Errorf("diffing %s: %w", dir, err)
	}
	if up == nil || lock == nil {
		return "", fmt.Errorf("diffing %s: the Kptfile has no upstream and upstreamLock: the package was not fetched with pkg get", dir)
	}
	local, err := kptpkg.ReadTree(dir)
	if err != nil {
		return "", err
	}
	lrepo, ldir, lversion := lock.FetchArgs()
	origin, err := fetchNormalized(ctx, f, kf, lrepo, ldir, lversion)
	if err != nil {
		return "", fmt.Errorf("fetching the locked upstream %s at %s: %w", lock.Origin, lock.Commit, err)
	}
	target := origin
	if opts.Version != "" && opts.Type != DiffLocal {
		target, err = fetchNormalized(ctx, f, kf, up.Repo, up.Dir, opts.Version)
		if err != nil {
			return "", fmt.Errorf("fetching upstream %s: %w", kptpkg.Origin{Store: up.Store, Repo: up.Repo, Dir: up.Dir, Ref: opts.Version}, err)
		}
	}
	tree := func(aPrefix, bPrefix string, a, b kptpkg.Tree) string {
		s, _ := textdiff.Tree(aPrefix, bPrefix, a, b, opts.Context)
		return s
	}
	switch opts.Type {
	case DiffLocal:
		return tree("upstream/", "local/", origin, local), nil
	case DiffRemote:
		return tree("upstream/", "upstream-new/", origin, target), nil
	case DiffCombined:
		return tree("upstream-new/", "local/", target, local), nil
	}
	var b strings.Builder
	b.WriteString("# local changes (upstream at the locked version → local)\n")
	b.WriteString(tree("upstream/", "local/", origin, local))
	b.WriteString("# remote changes (upstream at the locked version → upstream at the requested version)\n")
	b.WriteString(tree("upstream/", "upstream-new/", origin, target))
	return b.String(), nil
}

// fetchNormalized fetches an upstream version and makes it comparable with
// the local package: merge comments added, and the Kptfile's name and
// upstream fields taken from the local Kptfile.
func fetchNormalized(ctx context.Context, f Fetcher, localKf *kptfilev1.KptFile, repo, dir, version string) (kptpkg.Tree, error) {
	files, _, err := f.Fetch(ctx, repo, dir, version)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kptbot-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := kptpkg.Tree(files).Write(tmp); err != nil {
		return nil, err
	}
	if err := addMergeComments(tmp); err != nil {
		return nil, err
	}
	if _, ok := files[kptpkg.KptfileName]; ok {
		ukf, err := kptpkg.ReadKptfile(tmp)
		if err != nil {
			return nil, err
		}
		ukf.Name = localKf.Name
		kptpkg.CopyUpstream(ukf, localKf)
		if err := kptpkg.WriteKptfile(tmp, ukf); err != nil {
			return nil, err
		}
	}
	return kptpkg.ReadTree(tmp)
}
