package reconcile

import "github.com/go-git/go-git/v5/plumbing"

func plumbingHash(s string) plumbing.Hash { return plumbing.NewHash(s) }
