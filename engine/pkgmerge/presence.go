package pkgmerge

import (
	"fmt"
	"os"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// ApplyPresence applies kpt's rules for a (sub)package that is missing
// on some side: added upstream (copied in), added locally or deleted
// locally (left alone), deleted upstream (removed unless changed locally),
// added on both sides (an error). done is false when the package exists on
// all three sides and must be merged.
func ApplyPresence(sub, localPath, updatedPath, originPath string, localExists, updatedExists, originExists bool) (done bool, err error) {
	switch {
	case originExists && localExists && updatedExists:
		return false, nil
	case !originExists && localExists && updatedExists:
		return true, fmt.Errorf("subpackage %q added in both upstream and local: remove one of them and update again", sub)
	case !originExists && !localExists && updatedExists:
		t, err := kptpkg.ReadTree(updatedPath)
		if err != nil {
			return true, err
		}
		if err := t.Write(localPath); err != nil {
			return true, err
		}
		return true, AddMergeCommentsToDirs(localPath)
	case originExists && localExists && !updatedExists:
		// Deleted upstream: removed only if unchanged locally (compared with
		// merge comments on both sides, as kpt compares them).
		if err := AddMergeCommentsToDirs(originPath); err != nil {
			return true, err
		}
		// kyaml's copyutil.Diff would do, but it prints every difference
		// to stdout, which would corrupt `pkg update -o json`.
		origin, err := kptpkg.ReadTree(originPath)
		if err != nil {
			return true, err
		}
		local, err := kptpkg.ReadTree(localPath)
		if err != nil {
			return true, err
		}
		if added, removed, modified := origin.Changes(local); len(added)+len(removed)+len(modified) == 0 {
			return true, os.RemoveAll(localPath)
		}
		return true, nil
	default:
		return true, nil // added or deleted locally: left as it is
	}
}

// PrefixConflicts places the conflicts of the subpackage at rel in the
// root package (their file paths gain rel/).
func PrefixConflicts(rel string, cs []Conflict) []Conflict {
	if rel == "." {
		return cs
	}
	for i := range cs {
		cs[i].File = rel + "/" + cs[i].File
	}
	return cs
}

// ReadKptfileOrEmpty reads dir/Kptfile, or is an empty Kptfile when it is
// missing or invalid.
func ReadKptfileOrEmpty(dir string) *kptfilev1.KptFile {
	kf, err := kptpkg.ReadKptfile(dir)
	if err != nil {
		return &kptfilev1.KptFile{}
	}
	return kf
}
