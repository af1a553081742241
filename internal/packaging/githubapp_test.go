package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// appManifest holds every field GitHub's "create a GitHub App from a
// manifest" flow takes; decoded strictly, so a misspelled field fails.
type appManifest struct {
	Name           string `yaml:"name"`
	URL            string `yaml:"url"`
	Description    string `yaml:"description"`
	Public         *bool  `yaml:"public"`
	HookAttributes struct {
		URL    string `yaml:"url"`
		Active *bool  `yaml:"active"`
	} `yaml:"hook_attributes"`
	RedirectURL           string            `yaml:"redirect_url"`
	CallbackURLs          []string          `yaml:"callback_urls"`
	SetupURL              string            `yaml:"setup_url"`
	SetupOnUpdate         bool              `yaml:"setup_on_update"`
	RequestOAuthOnInstall bool              `yaml:"request_oauth_on_install"`
	DefaultPermissions    map[string]string `yaml:"default_permissions"`
	DefaultEvents         []string          `yaml:"default_events"`
}

// needed is a permission the adapter's calls require.
type needed struct{ permission, level string }

// callPermissions maps every go-github call forge/github makes to the App
// permission it needs (GitHub's "Permissions required for GitHub Apps").
// A call missing here fails the test: adding one to the adapter means
// checking the App manifest.
var callPermissions = map[string]needed{
	"Apps.ListRepos":                  {"metadata", "read"},
	"Apps.ListInstallations":          {}, // as the App (JWT): no installation permission
	"Apps.FindRepositoryInstallation": {},
	// GET /user/repos: only with a personal access token (an App's
	// installation lists through Apps.ListRepos), so no App permission.
	"Repositories.ListByAuthenticatedUser": {},
	"Apps.Get":                             {}, // GET /app as the App (JWT): its slug
	"Users.Get":                            {}, // GET /user: token mode only (a PAT's user)
	"Checks.CreateCheckRun":                {"checks", "write"},
	"Checks.UpdateCheckRun":                {"checks", "write"},
	"Git.CreateRef":                        {"contents", "write"},
	"Git.UpdateRef":                        {"contents", "write"},
	"Git.DeleteRef":                        {"contents", "write"},
	"Git.CreateTag":                        {"contents", "write"},
	"Git.GetBlobRaw":                       {"contents", "read"},
	"Git.GetRef":                           {"contents", "read"},
	"Git.GetTag":                           {"contents", "read"},
	"Git.GetTree":                          {"contents", "read"},
	"Issues.Create":                        {"issues", "write"},
	"Issues.Edit":                          {"issues", "write"},
	"Issues.CreateComment":                 {"issues", "write"},
	"Issues.EditComment":                   {"issues", "write"},
	"Issues.ListByRepo":                    {"issues", "read"},
	"Issues.ListComments":                  {"issues", "read"},
	"Issues.AddLabelsToIssue":              {"issues", "write"},
	"Issues.ReplaceLabelsForIssue":         {"issues", "write"},
	"PullRequests.Create":                  {"pull_requests", "write"},
	"PullRequests.Edit":                    {"pull_requests", "write"},
	"PullRequests.Merge":                   {"contents", "write"}, // and pull_requests: write
	"PullRequests.Get":                     {"pull_requests", "read"},
	"PullRequests.List":                    {"pull_requests", "read"},
	"PullRequests.ListReviews":             {"pull_requests", "read"},
	"PullRequests.ListFiles":               {"pull_requests", "read"},
	"Reactions.CreateIssueCommentReaction": {"issues", "write"},
	"Repositories.Dispatch":                {"contents", "write"},
	"Repositories.GetContents":             {"contents", "read"},
	"Repositories.GetPermissionLevel":      {"metadata", "read"},
	"Repositories.ListBranches":            {"metadata", "read"},
	"Repositories.ListTags":                {"metadata", "read"},
	"Repositories.Get":                     {"metadata", "read"},
	"Repositories.CreateStatus":            {"statuses", "write"},
	"Teams.GetTeamMembershipBySlug":        {"members", "read"},
	"Organizations.GetOrgMembership":       {"members", "read"},
	"Repositories.ListCollaborators":       {"metadata", "read"},
	"Repositories.GetBranchProtection":     {"administration", "read"},
	"Repositories.GetCombinedStatus":       {"statuses", "read"},
	"Checks.ListCheckRunsForRef":           {"checks", "read"},
	"Repositories.CompareCommits":          {"contents", "read"},
	"Repositories.GetCommit":               {"contents", "read"},
	"Issues.RemoveLabelForIssue":           {"issues", "write"},
	"Issues.Get":                           {"issues", "read"},
	"PullRequests.ListComments":            {"pull_requests", "read"},
	"PullRequests.CreateReview":            {"pull_requests", "write"},
}

// eventPermissions are the permissions an App needs to receive an event.
var eventPermissions = map[string]string{
	"push":                "contents",
	"pull_request":        "pull_requests",
	"pull_request_review": "pull_requests",
	"issue_comment":       "issues",
	"check_run":           "checks",
	"check_suite":         "checks",
}

var levels = map[string]int{"": 0, "read": 1, "write": 2}

// adapterNeeds scans forge/github's code for the calls it makes and returns
// the permissions they need, naming any call the table does not know.
func adapterNeeds(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../forge/github/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("forge/github: %v", err)
	}
	call := regexp.MustCompile(`\.(Apps|Checks|Git|Issues|PullRequests|Reactions|Repositories|Teams|Organizations|Users|Actions|Search)\.([A-Z]\w*)\(`)
	need := map[string]string{"metadata": "read"}
	raise := func(p, l string) {
		if levels[l] > levels[need[p]] {
			need[p] = l
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, m := range call.FindAllStringSubmatch(src, -1) {
			n, ok := callPermissions[m[1]+"."+m[2]]
			if !ok {
				t.Errorf("%s calls %s.%s, whose App permission this test does not know: add it to callPermissions and check deploy/github-app.yaml", filepath.Base(f), m[1], m[2])
				continue
			}
			if n.permission != "" {
				raise(n.permission, n.level)
			}
		}
		// Draft/ready goes through GraphQL; branches and commits are pushed
		// over git with the installation token.
		if strings.Contains(src, "markPullRequestReadyForReview") || strings.Contains(src, "convertPullRequestToDraft") {
			raise("pull_requests", "write")
		}
		if strings.Contains(src, "gitrepo.PushFiles") || strings.Contains(src, "gitrepo.DeleteBranch") {
			raise("contents", "write")
		}
		if strings.Contains(src, "PullRequests.Merge(") {
			raise("pull_requests", "write")
		}
	}
	return need
}

// TestGitHubAppManifest checks deploy/github-app.yaml: every field is one
// GitHub takes, the webhook points at the server's route, the permissions
// are exactly what forge/github's calls need (least privilege, nothing
// missing), and the events are the ones the webhook intake acts on.
func TestGitHubAppManifest(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../deploy/github-app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m appManifest
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("deploy/github-app.yaml: %v", err)
	}
	if m.Name == "" || m.URL == "" || m.HookAttributes.URL == "" || m.RedirectURL == "" || m.Public == nil {
		t.Errorf("name, url, hook_attributes.url, redirect_url and public are required: %+v", m)
	}
	if !strings.HasSuffix(m.HookAttributes.URL, "/webhooks/github") || !strings.HasPrefix(m.HookAttributes.URL, "https://") {
		t.Errorf("hook_attributes.url %q: want https://HOST/webhooks/github, the server's route", m.HookAttributes.URL)
	}
	if m.HookAttributes.Active != nil && !*m.HookAttributes.Active {
		t.Error("the webhook is inactive")
	}
	if m.RequestOAuthOnInstall || len(m.CallbackURLs) > 0 {
		t.Error("kptbot acts as its installation, never as a user: no OAuth")
	}

	need := adapterNeeds(t)
	for ev, p := range eventPermissions {
		for _, sub := range m.DefaultEvents {
			if sub == ev && levels[need[p]] == 0 {
				need[p] = "read"
			}
		}
	}
	var problems []string
	for p, l := range m.DefaultPermissions {
		if levels[l] == 0 {
			problems = append(problems, "permission "+p+": "+l+" is not read or write")
		}
		if levels[l] > levels[need[p]] {
			problems = append(problems, "permission "+p+": "+l+" is more than forge/github needs ("+orNone(need[p])+")")
		}
	}
	for p, l := range need {
		if levels[m.DefaultPermissions[p]] < levels[l] {
			problems = append(problems, "permission "+p+": "+orNone(m.DefaultPermissions[p])+", forge/github needs "+l)
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
	if m.DefaultPermissions["members"] != "read" {
		t.Error("members: read is needed for approvers given as teams (organization permission)")
	}

	checkEvents(t, m.DefaultEvents)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// checkEvents runs the shared real payloads through the webhook intake:
// every subscribed event must be one it acts on, and every event it acts
// on must be subscribed (except the installation events GitHub sends
// every App unasked).
func checkEvents(t *testing.T, subscribed []string) {
	t.Helper()
	payloads, err := filepath.Glob("../../testdata/webhooks/github/*/*.json")
	if err != nil || len(payloads) == 0 {
		t.Fatalf("no payloads: %v", err)
	}
	actsOn := map[string]bool{}
	for _, p := range payloads {
		// <event>/<action>.payload.json, or derived/<event>.<action>....json
		event := filepath.Base(filepath.Dir(p))
		if event == "derived" {
			event, _, _ = strings.Cut(filepath.Base(p), ".")
		}
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := github.Normalize(event, "test", body)
		if err != nil && !errors.Is(err, forge.ErrBadPayload) {
			t.Fatalf("%s: %v", p, err)
		}
		if err == nil && ev.Kind != forge.EventIgnored {
			actsOn[event] = true
		}
	}
	unasked := map[string]bool{"installation": true, "installation_repositories": true, "ping": true}
	for _, e := range subscribed {
		if !actsOn[e] {
			t.Errorf("default_events has %s, which the webhook intake ignores", e)
		}
		if unasked[e] {
			t.Errorf("default_events has %s, which GitHub sends every App anyway", e)
		}
	}
	for e := range actsOn {
		found := false
		for _, s := range subscribed {
			found = found || s == e
		}
		if !found && !unasked[e] {
			t.Errorf("the webhook intake acts on %s, but default_events does not subscribe to it", e)
		}
	}
}
