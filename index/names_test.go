package index

import (
	"testing"

	"github.com/kptbot/kptbot/forge"
)

// TestNamesFollowRenames: a name keeps meaning the repository that had
// it while that repository exists, renamed or not; a repository created
// under the old name does not take it; after a full rebuild shows the
// first one gone, the name means whatever has it now.
func TestNamesFollowRenames(t *testing.T) {
	gl := func(name string, id int64) Entry {
		return Entry{Repo: forge.Repo{Forge: forge.GitLab, FullName: name, ID: id}}
	}
	const ref = "acme/blueprints"
	steps := []struct {
		name  string
		repos []Entry
		full  bool // a full rebuild (else an event's update)
		want  map[string]bool
	}{
		{"first sight binds the name", []Entry{gl("acme/blueprints", 5)}, true,
			map[string]bool{"acme/blueprints#5": true}},
		{"renamed: the old name follows the id", []Entry{gl("acme/blueprints-v2", 5)}, false,
			map[string]bool{"acme/blueprints-v2#5": true}},
		{"a new repository under the old name does not take it", []Entry{gl("acme/blueprints-v2", 5), gl("acme/blueprints", 9)}, false,
			map[string]bool{"acme/blueprints-v2#5": true, "acme/blueprints#9": false}},
		{"a full rebuild still shows the renamed one", []Entry{gl("acme/blueprints", 9), gl("acme/blueprints-v2", 5)}, true,
			map[string]bool{"acme/blueprints-v2#5": true, "acme/blueprints#9": false}},
		{"an event drops the renamed one: the name means nothing yet", []Entry{gl("acme/blueprints", 9)}, false,
			map[string]bool{"acme/blueprints#9": false}},
		{"a full rebuild shows it gone: the name's new holder", []Entry{gl("acme/blueprints", 9)}, true,
			map[string]bool{"acme/blueprints#9": true}},
	}
	var b bindings
	for _, s := range steps {
		b = b.bind(s.repos, !s.full)
		for _, e := range s.repos {
			key := e.Repo.FullName + "#" + itoa(e.Repo.ID)
			want, asked := s.want[key]
			if !asked {
				continue
			}
			if got := b.refersTo(ref, e.Repo); got != want {
				t.Errorf("%s: %q refers to %s: %v, want %v", s.name, ref, key, got, want)
			}
		}
	}
	// Without ids (a forge that gives none) names are compared as before.
	if !(bindings{}).refersTo(ref, forge.Repo{Forge: forge.GitHub, FullName: "Acme/Blueprints"}) {
		t.Error("a name without an id binding must match by name")
	}
}

func itoa(id int64) string { return idKey("", id)[1:] }
