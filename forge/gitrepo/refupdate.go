package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/revlist"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kptbot/kptbot/fetch"
)

// RefUpdate is one compare-and-swap on a remote ref.
type RefUpdate struct {
	Name plumbing.ReferenceName
	// Old is where the ref must be now; the zero hash means it must not
	// exist (create only: a published tag is never moved, whatever its
	// value, even to a descendant).
	Old plumbing.Hash
	// New is where it goes; the zero hash deletes it.
	New plumbing.Hash
}

// errRefMoved is a remote ref not where a RefUpdate expected it, seen in
// the refs the remote advertised for the push; PushError reads it as a
// conflict.
var errRefMoved = errors.New("remote ref is not where expected")

// PushRefs sends updates from the objects in s to the remote at url as
// compare-and-swaps. go-git's push would fast-forward a ref that already
// exists (receive-pack takes a tag update the git CLI refuses), so the
// commands are written here with the old value each update expects: the
// refs the remote advertises on this same connection are checked first,
// and receive-pack checks the old values again under its ref locks, so a
// ref created or moved between the two is refused too ("failed to update
// ref"). An update the remote already holds is skipped.
//
// When the remote supports atomic pushes (git, GitHub and GitLab do) the
// updates apply all or none; otherwise they go one push each, in order,
// stopping at the first refused, so callers order them so that a prefix
// left by a failure is a state their next run repairs. The error is
// PushError's input (a refused update is a conflict there).
func PushRefs(ctx context.Context, s storage.Storer, url string, auth transport.AuthMethod, updates []RefUpdate) error {
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return err
	}
	cli, err := client.NewClient(ep)
	if err != nil {
		return err
	}
	sess, err := cli.NewReceivePackSession(ep, auth)
	if err != nil {
		return err
	}
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		_ = sess.Close()
		return err
	}
	if len(updates) > 1 && !ar.Capabilities.Supports(capability.Atomic) {
		_ = sess.Close()
		for _, u := range updates {
			if err := PushRefs(ctx, s, url, auth, []RefUpdate{u}); err != nil {
				return err
			}
		}
		return nil
	}
	err = receivePack(ctx, sess, s, ar, updates)
	if cerr := sess.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if errors.Is(err, errAlreadyThere) {
		return nil
	}
	return err
}

// errAlreadyThere is a push whose every update the remote already holds.
var errAlreadyThere = errors.New("already up to date")

// receivePack checks updates against the advertised refs ar and sends
// them, with the objects the remote lacks, on sess.
func receivePack(ctx context.Context, sess transport.ReceivePackSession, s storage.Storer, ar *packp.AdvRefs, updates []RefUpdate) error {
	remote, err := ar.AllReferences()
	if err != nil {
		return err
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	if len(updates) > 1 {
		_ = req.Capabilities.Set(capability.Atomic)
	}
	var news []plumbing.Hash
	for _, u := range updates {
		var cur plumbing.Hash
		if r, err := remote.Reference(u.Name); err == nil {
			cur = r.Hash()
		}
		if cur == u.New {
			continue
		}
		if cur != u.Old {
			return fmt.Errorf("%w: %s is at %s, expected %s", errRefMoved, u.Name, describe(cur), describe(u.Old))
		}
		req.Commands = append(req.Commands, &packp.Command{Name: u.Name, Old: u.Old, New: u.New})
		if !u.New.IsZero() {
			news = append(news, u.New)
		}
	}
	if len(req.Commands) == 0 {
		return errAlreadyThere
	}
	return sendPack(ctx, sess, s, ar, req, remote, news)
}

// sendPack sends req with a packfile of the objects reachable from news
// that the remote, holding remote's refs, lacks.
func sendPack(ctx context.Context, sess transport.ReceivePackSession, s storage.Storer, ar *packp.AdvRefs, req *packp.ReferenceUpdateRequest, remote storer.ReferenceStorer, news []plumbing.Hash) error {
	done := make(chan error, 1)
	if len(news) == 0 {
		close(done)
	} else {
		var haves []plumbing.Hash
		iter, err := remote.IterReferences()
		if err != nil {
			return err
		}
		_ = iter.ForEach(func(r *plumbing.Reference) error {
			if r.Type() == plumbing.HashReference {
				haves = append(haves, r.Hash())
			}
			return nil
		})
		shallow, err := s.Shallow()
		if err != nil {
			return err
		}
		objs, err := revlist.Objects(s, news, append(haves, shallow...))
		if err != nil {
			return fmt.Errorf("listing the objects to push: %w", err)
		}
		cfg, err := s.Config()
		if err != nil {
			return err
		}
		rd, wr := io.Pipe()
		req.Packfile = rd
		go func() {
			_, err := packfile.NewEncoder(wr, s, !ar.Capabilities.Supports(capability.OFSDelta)).Encode(objs, cfg.Pack.Window)
			if err != nil {
				done <- wr.CloseWithError(err)
				return
			}
			done <- wr.Close()
		}()
		defer rd.Close() // unblocks the encoder if ReceivePack returns early
	}
	rs, err := sess.ReceivePack(ctx, req)
	if rs != nil && len(rs.CommandStatuses) > 0 {
		return statusError(rs) // receive-pack's report, with every refused ref
	}
	if err != nil {
		return err
	}
	return <-done
}

// statusError is the error of receive-pack's report, naming every refused
// ref with its reason; in an atomic push the refs refused only because
// another one was ("atomic push failure") are left out when a real reason
// is there, so the caller sees what lost.
func statusError(rs *packp.ReportStatus) error {
	if rs == nil {
		return nil
	}
	if rs.UnpackStatus != "ok" {
		return rs.Error()
	}
	var real, atomic []error
	for _, c := range rs.CommandStatuses {
		switch err := c.Error(); {
		case err == nil:
		case strings.HasPrefix(c.Status, "atomic "):
			atomic = append(atomic, err)
		default:
			real = append(real, err)
		}
	}
	if len(real) == 0 {
		real = atomic
	}
	return errors.Join(real...)
}

// describe names a ref value for an error: a SHA, or "absent".
func describe(h plumbing.Hash) string {
	if h.IsZero() {
		return "absent"
	}
	return h.String()
}

// Refs lists the remote's refs and where they point, as git ls-remote does.
func (r Remote) Refs(ctx context.Context) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{r.URL}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: r.Auth})
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil, fmt.Errorf("listing refs of %s: %w", fetch.Redact(r.URL), err)
	}
	out := make(map[plumbing.ReferenceName]plumbing.Hash, len(refs))
	for _, rf := range refs {
		if rf.Type() == plumbing.HashReference {
			out[rf.Name()] = rf.Hash()
		}
	}
	return out, nil
}
