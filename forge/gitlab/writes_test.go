package gitlab

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

func TestReactIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "x"})
	cm, err := c.Comment(ctx, repo, ch.Number, "/kptbot approve")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.React(ctx, repo, ch.Number, cm.ID, "+1"); err != nil {
			t.Errorf("React(+1): %v", err)
		}
	}
	if err := c.React(ctx, repo, ch.Number, cm.ID, "hooray"); err != nil {
		t.Errorf("React(hooray): %v", err)
	}
	var names []string
	for _, n := range f.MergeRequest(repo, ch.Number).Notes {
		if n.ID == cm.ID {
			names = n.Awards
		}
	}
	if strings.Join(names, ",") != "thumbsup,tada" {
		t.Errorf("awards = %v, want thumbsup once and tada", names)
	}
	if err := c.React(ctx, repo, ch.Number, cm.ID+100, "eyes"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("React on a missing note: %v, want ErrNotFound", err)
	}
	if err := c.React(ctx, repo, ch.Number, cm.ID, "party"); err == nil {
		t.Error("React with a name GitHub does not have succeeded")
	}
}

func TestCommentsSkipSystemNotesAndQuickActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "x", Body: "upstream says:\n/close"})
	if ch.Body != "upstream says:\n\\/close" {
		t.Errorf("merge request description = %q, want the /close line escaped", ch.Body)
	}
	body := "upstream says:\n/close"
	n := len(f.Requests())
	if _, err := c.UpdateChange(ctx, repo, ch.Number, forge.ChangeUpdate{Body: &body}); err != nil {
		t.Fatal(err)
	}
	if log := f.Requests()[n:]; len(log) != 1 {
		t.Errorf("updating to the same (escaped) description sent %v, want only the read", log)
	}
	f.Approve(repo, ch.Number, "alice")
	if _, err := c.Comment(ctx, repo, ch.Number, "Rendered.\n/merge\n```\n/escaped in code too\n```"); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListComments(ctx, repo, ch.Number)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListComments = %+v, %v; want one comment, no system notes", list, err)
	}
	if want := "Rendered.\n\\/merge\n```\n\\/escaped in code too\n```"; list[0].Body != want {
		t.Errorf("posted body = %q, want %q (no quick action, fenced or not)", list[0].Body, want)
	}
	if list[0].Author.Login != gitlabtest.BotUsername || !list[0].Author.Bot {
		t.Errorf("author = %+v, want the bot user", list[0].Author)
	}
}

func TestReportCheckStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/site-a"}
	sha := f.Seed(repo, "main", map[string][]byte{"a": []byte("a")})
	for _, tc := range []struct {
		rep  forge.CheckReport
		want string
	}{
		{forge.CheckReport{Status: forge.CheckQueued}, "pending"},
		{forge.CheckReport{Status: forge.CheckInProgress}, "running"},
		{forge.CheckReport{Status: forge.CheckInProgress}, "running"}, // again: GitLab's 400 is success
		{forge.CheckReport{Status: forge.CheckCompleted, Conclusion: forge.CheckFailure}, "failed"},
		{forge.CheckReport{Status: forge.CheckCompleted, Conclusion: forge.CheckCancelled}, "canceled"},
		{forge.CheckReport{Status: forge.CheckCompleted, Conclusion: forge.CheckNeutral, Title: "nothing to render"}, "success"},
	} {
		tc.rep.Name, tc.rep.HeadSHA = "kptbot/render", sha
		if err := c.ReportCheck(ctx, repo, tc.rep); err != nil {
			t.Fatalf("ReportCheck(%s %s): %v", tc.rep.Status, tc.rep.Conclusion, err)
		}
		st, _ := f.Status(repo, sha, "kptbot/render")
		if got := st.State; got != tc.want {
			t.Errorf("ReportCheck(%s %s) left state %q, want %q", tc.rep.Status, tc.rep.Conclusion, got, tc.want)
		}
	}
	if !hasRequest(f.Requests(), "POST /projects/acme%2Fsite-a/statuses/"+sha) {
		t.Errorf("requests %v: want POST .../statuses/%s", f.Requests(), sha)
	}
}

func TestDispatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/edge-1"} // no DefaultBranch: read from the API
	f.Seed(repo, "trunk", map[string][]byte{"a": []byte("a")})
	if err := c.Dispatch(ctx, repo, "kptbot-upstream-tag", map[string]any{"tag": "pkg/v1"}); err != nil {
		t.Fatal(err)
	}
	f.AddTrigger(repo, "glptt-secret")
	c.TriggerToken = func(project string) (string, bool) { return "glptt-secret", project == "acme/edge-1" }
	if err := c.Dispatch(ctx, repo, "kptbot-upstream-tag", nil); err != nil {
		t.Fatal(err)
	}
	pls := f.Pipelines(repo)
	if len(pls) != 2 {
		t.Fatalf("pipelines = %v, want two", pls)
	}
	for i, want := range []struct{ source, payload string }{{"api", `{"tag":"pkg/v1"}`}, {"trigger", `{}`}} {
		vars := pls[i].Variables
		if pls[i].Source != want.source || pls[i].Ref != "trunk" || vars["KPTBOT_EVENT"] != "kptbot-upstream-tag" || vars["KPTBOT_PAYLOAD"] != want.payload {
			t.Errorf("pipeline %d = %v, want source %s on trunk with KPTBOT_EVENT and KPTBOT_PAYLOAD %s", i, pls[i], want.source, want.payload)
		}
	}
	if err := c.Dispatch(ctx, forge.Repo{FullName: "acme/none"}, "x", nil); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("Dispatch to a missing project: %v, want ErrNotFound", err)
	}
}

func TestPermissionAndTeams(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/sites/edge-1"}
	f.Seed(repo, "main", map[string][]byte{"a": []byte("a")})
	f.AddGroupMember("acme", "olive", 50)
	f.AddGroupMember("acme/sites", "dev", 30)
	f.AddGroupMember("acme/platform", "rita", 20)
	for login, lvl := range map[string]int{"gus": 10, "min": 5, "rita": 20, "mae": 40} {
		f.SetAccess(repo, login, lvl)
	}
	f.UserID("stranger")
	for login, want := range map[string]forge.Permission{
		"olive": forge.PermissionAdmin, "mae": forge.PermissionAdmin, "dev": forge.PermissionWrite, "rita": forge.PermissionRead,
		"gus": forge.PermissionRead, "min": forge.PermissionNone, "stranger": forge.PermissionNone, "ghost": forge.PermissionNone,
	} {
		if got, err := c.Permission(ctx, repo, login); err != nil || got != want {
			t.Errorf("Permission(%s) = %s, %v; want %s", login, got, err, want)
		}
	}
	if _, err := c.Permission(ctx, forge.Repo{FullName: "acme/missing"}, "olive"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("Permission on a missing project: %v, want ErrNotFound", err)
	}
	for _, tc := range []struct {
		team, login string
		want        bool
	}{{"acme/platform", "rita", true}, {"acme/platform", "olive", true}, {"acme/platform", "dev", false}, {"acme/sites", "ghost", false}} {
		if got, err := c.TeamMember(ctx, repo, tc.team, tc.login); err != nil || got != tc.want {
			t.Errorf("TeamMember(%s, %s) = %v, %v; want %v", tc.team, tc.login, got, err, tc.want)
		}
	}
	if _, err := c.TeamMember(ctx, repo, "acme/typo", "rita"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("TeamMember of a missing group: %v, want ErrNotFound", err)
	}
}

func TestCreateTagIsAnnotated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/site-a"}
	sha := f.Seed(repo, "main", map[string][]byte{"a": []byte("a")})
	if err := c.CreateTag(ctx, repo, "basens/v1", sha, ""); err != nil {
		t.Fatal(err)
	}
	g := f.Repository(repo)
	rf, err := g.Reference(plumbing.NewTagReferenceName("basens/v1"), false)
	if err != nil {
		t.Fatal(err)
	}
	if tag, err := g.TagObject(rf.Hash()); err != nil || tag.Target.String() != sha {
		t.Errorf("tag basens/v1 is not an annotated tag of %s: %v", sha, err)
	}
	if err := c.CreateTag(ctx, repo, "basens/v2", "1111111111111111111111111111111111111111", "v2"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("tagging an unknown commit: %v, want ErrNotFound", err)
	}
}

func TestReadCommentIsTheAPIsRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "x"})
	id := f.AddNote(repo, ch.Number, "alice", "/kptbot approve")
	got, err := c.ReadComment(ctx, repo, ch.Number, id)
	if err != nil || got.ID != id || got.Body != "/kptbot approve" || got.Author.Login != "alice" || got.Author.ID != f.UserID("alice") {
		t.Errorf("ReadComment = %+v, %v; want alice's note", got, err)
	}
	if _, err := c.ReadComment(ctx, repo, ch.Number, id+1000); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ReadComment of a missing note: %v, want ErrNotFound", err)
	}
}
