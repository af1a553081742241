package index

import (
	"maps"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/trust"
)

// Which repository an upstream's name means. Followers name their
// upstream by owner/name in kptbot.yaml; a forge keeps a renamed or
// transferred repository's id and redirects its old name, until a new
// repository takes that name. Taking the name must not take the
// followers: a name means the repository that had it when the index
// first saw it, for as long as that repository exists (under whatever
// name it has now); only then the repository that has the name.

// bindings maps forge + "/" + lower-case owner/name to the id of the
// repository the name means. It is replaced, never changed, so a
// snapshot's bindings stay as they were.
type bindings map[string]int64

// bind returns b with every entry's current name bound to its id, unless
// the name is already bound to a repository that is still indexed (one
// renamed since, whose old name a new repository took) or, with keep, to
// one the index has lost track of (an event dropped it; the next full
// rebuild says whether it still exists).
func (b bindings) bind(repos []Entry, keep bool) bindings {
	present := map[string]bool{}
	for _, e := range repos {
		if e.Repo.ID != 0 {
			present[idKey(e.Repo.Forge, e.Repo.ID)] = true
		}
	}
	out := maps.Clone(b)
	if out == nil {
		out = bindings{}
	}
	if !keep {
		for k, id := range out {
			if !present[idKey(forgeOf(k), id)] {
				delete(out, k)
			}
		}
	}
	for _, e := range repos {
		if e.Repo.ID == 0 {
			continue
		}
		k := genKey(e.Repo.Forge, e.Repo.FullName)
		if _, taken := out[k]; !taken {
			out[k] = e.Repo.ID
		}
	}
	return out
}

func idKey(forgeName string, id int64) string { return forgeName + "#" + strconv.FormatInt(id, 10) }

func forgeOf(k string) string { f, _, _ := strings.Cut(k, "/"); return f }

// refersTo reports whether the upstream reference ref (owner/name, or a
// clone URL) means r: by the name's binding when it has one and r's id
// is known, else by name or clone URL.
func (b bindings) refersTo(ref string, r forge.Repo) bool {
	if id, ok := b[r.Forge+"/"+trust.RefKey(ref)]; ok && r.ID != 0 {
		return id == r.ID
	}
	return SameUpstream(ref, r)
}

// RefersTo reports whether a follower's upstream reference means r (see
// above: a renamed upstream is still followed under its old name, and a
// repository since created under that name is not).
func (x *Index) RefersTo(ref string, r forge.Repo) bool {
	x.mu.Lock()
	b := x.bound
	x.mu.Unlock()
	return b.refersTo(ref, r)
}
