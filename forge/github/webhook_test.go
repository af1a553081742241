package github

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

var secret = []byte("It's a Secret to Everybody")

func payload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gitfixture.Root(), "testdata", "webhooks", "github", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func delivery(event string, body []byte, sig string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/github", bytes.NewReader(body))
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	if sig != "" {
		r.Header.Set("X-Hub-Signature-256", sig)
	}
	return r
}

func TestParseWebhookPayloads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		event, file string
		kind        forge.EventKind
		check       func(t *testing.T, e forge.Event)
	}{
		{"ping", "ping/payload.json", forge.EventPing, nil},
		{"push", "push/tag-created.ghes.payload.json", forge.EventTagPushed, func(t *testing.T, e forge.Event) {
			if e.Ref == "" || e.After == "" || e.Repo.FullName == "" {
				t.Errorf("tag push: %+v", e)
			}
		}},
		{"push", "derived/push.branch-update.payload.json", forge.EventBranchPushed, func(t *testing.T, e forge.Event) {
			if e.Before == forge.ZeroSHA || e.After == "" {
				t.Errorf("branch push: before %s after %s", e.Before, e.After)
			}
		}},
		{"pull_request", "pull_request/opened.payload.json", forge.EventChangeOpened, func(t *testing.T, e forge.Event) {
			if e.Change == nil || e.Change.Number == 0 || e.Change.HeadSHA == "" || e.Change.BaseRef == "" {
				t.Errorf("change: %+v", e.Change)
			}
		}},
		{"pull_request", "pull_request/converted_to_draft.payload.json", forge.EventChangeConvertedToDraft, nil},
		{"pull_request", "pull_request/closed.payload.json", forge.EventChangeClosed, nil},
		{"pull_request", "derived/pull_request.closed.merged.payload.json", forge.EventChangeMerged, func(t *testing.T, e forge.Event) {
			if !e.Change.Merged || e.Change.State != "merged" {
				t.Errorf("merged change: %+v", e.Change)
			}
		}},
		{"pull_request", "pull_request/labeled.payload.json", forge.EventChangeEdited, nil},
		{"pull_request", "pull_request/assigned.payload.json", forge.EventIgnored, nil},
		{"pull_request_review", "derived/pull_request_review.submitted.approved.payload.json", forge.EventReviewSubmitted, func(t *testing.T, e forge.Event) {
			if e.Review.State != forge.ReviewApproved || e.Review.CommitSHA == "" || e.Review.Reviewer.Login == "" {
				t.Errorf("approval: %+v", e.Review)
			}
		}},
		{"pull_request_review", "derived/pull_request_review.submitted.changes_requested.payload.json", forge.EventReviewSubmitted, func(t *testing.T, e forge.Event) {
			if e.Review.State != forge.ReviewChangesRequested {
				t.Errorf("review: %+v", e.Review)
			}
		}},
		{"pull_request_review", "pull_request_review/dismissed.payload.json", forge.EventReviewDismissed, nil},
		{"issue_comment", "derived/issue_comment.created.on-pull-request.payload.json", forge.EventCommentCreated, func(t *testing.T, e forge.Event) {
			if e.Comment == nil || e.Comment.Body == "" || e.Change == nil || e.Change.Number == 0 {
				t.Errorf("comment: %+v %+v", e.Comment, e.Change)
			}
		}},
		{"issue_comment", "issue_comment/created.payload.json", forge.EventIgnored, nil},
		{"installation", "installation/created.payload.json", forge.EventInstallationAdded, func(t *testing.T, e forge.Event) {
			if e.InstallationID == 0 || len(e.Repos) == 0 {
				t.Errorf("installation: %+v", e)
			}
		}},
		{"installation", "installation/deleted.payload.json", forge.EventInstallationRemoved, nil},
		{"installation_repositories", "installation_repositories/added.payload.json", forge.EventInstallationAdded, nil},
		{"installation_repositories", "installation_repositories/removed.payload.json", forge.EventInstallationRemoved, nil},
		{"repository", "derived/repository.created.payload.json", forge.EventInstallationAdded, func(t *testing.T, e forge.Event) {
			if len(e.Repos) != 1 || e.Repos[0].FullName != "Codertocat/Hello-World" {
				t.Errorf("created: %+v", e.Repos)
			}
		}},
		{"repository", "derived/repository.deleted.payload.json", forge.EventInstallationRemoved, func(t *testing.T, e forge.Event) {
			if len(e.Repos) != 1 || e.Repos[0].FullName != "Codertocat/Hello-World" {
				t.Errorf("deleted: %+v", e.Repos)
			}
		}},
		{"repository", "derived/repository.renamed.payload.json", forge.EventRepoRenamed, func(t *testing.T, e forge.Event) {
			if e.Repo.FullName != "Codertocat/Hello-World-renamed" || e.From != "Codertocat/Hello-World" {
				t.Errorf("renamed: %s from %q", e.Repo.FullName, e.From)
			}
		}},
		{"repository", "derived/repository.transferred.payload.json", forge.EventRepoRenamed, func(t *testing.T, e forge.Event) {
			if e.Repo.FullName != "octo-org/Hello-World" || e.From != "Codertocat/Hello-World" {
				t.Errorf("transferred: %s from %q", e.Repo.FullName, e.From)
			}
		}},
		{"check_run", "check_run/rerequested.payload.json", forge.EventCheckRerequested, func(t *testing.T, e forge.Event) {
			if e.After == "" || e.Repo.FullName == "" {
				t.Errorf("check rerequested (go-github cannot parse this payload): %+v", e)
			}
		}},
		{"check_suite", "check_suite/rerequested.payload.json", forge.EventCheckRerequested, nil},
		{"create", "create/payload.json", forge.EventIgnored, nil},
		{"release", "release/published.payload.json", forge.EventIgnored, nil},
		{"status", "status/payload.json", forge.EventIgnored, nil},
		{"made_up_event", "ping/payload.json", forge.EventIgnored, nil},
	}
	for _, tc := range tests {
		t.Run(tc.event+"/"+tc.file, func(t *testing.T) {
			t.Parallel()
			body := payload(t, tc.file)
			e, err := ParseWebhook(delivery(tc.event, body, sign(secret, body)), secret, 0)
			if err != nil {
				t.Fatalf("ParseWebhook: %v", err)
			}
			if e.Kind != tc.kind {
				t.Fatalf("kind = %s (%s), want %s", e.Kind, e.Ignored, tc.kind)
			}
			if e.DeliveryID == "" || e.Forge != forge.GitHub {
				t.Errorf("delivery id / forge: %+v", e)
			}
			if e.Kind == forge.EventIgnored && e.Ignored == "" {
				t.Error("ignored without a reason")
			}
			if tc.check != nil {
				tc.check(t, e)
			}
		})
	}
}

func TestParseWebhookRejects(t *testing.T) {
	t.Parallel()
	body := payload(t, "ping/payload.json")
	tampered := append([]byte{}, body...)
	tampered[len(tampered)-3] ^= 1
	tests := []struct {
		name   string
		req    *http.Request
		secret []byte
		max    int64
		want   error
	}{
		{"no signature", delivery("ping", body, ""), secret, 0, forge.ErrUnauthorized},
		{"wrong secret", delivery("ping", body, sign([]byte("guess"), body)), secret, 0, forge.ErrUnauthorized},
		{"tampered body", delivery("ping", tampered, sign(secret, body)), secret, 0, forge.ErrUnauthorized},
		{"sha1 only", delivery("ping", body, "sha1=abc"), secret, 0, forge.ErrUnauthorized},
		{"not hex", delivery("ping", body, "sha256=zz"), secret, 0, forge.ErrUnauthorized},
		{"no secret configured", delivery("ping", body, sign(nil, body)), nil, 0, forge.ErrUnauthorized},
		{"too large", delivery("ping", body, sign(secret, body)), secret, 10, forge.ErrTooLarge},
		{"garbage", delivery("pull_request", []byte("{not json"), sign(secret, []byte("{not json"))), secret, 0, forge.ErrBadPayload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := ParseWebhook(tc.req, tc.secret, tc.max); !errors.Is(err, tc.want) {
				t.Errorf("error = %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, c := range []struct{ event, file string }{
		{"push", "push/payload.json"}, {"pull_request", "pull_request/opened.payload.json"},
		{"pull_request_review", "pull_request_review/submitted.payload.json"}, {"check_run", "check_run/rerequested.payload.json"},
		{"issue_comment", "issue_comment/created.payload.json"}, {"installation", "installation/created.payload.json"},
	} {
		f.Add(c.event, payload(f, c.file))
	}
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		e, err := Normalize(event, "d", body)
		if err != nil {
			if !errors.Is(err, forge.ErrBadPayload) {
				t.Fatalf("error %v is not ErrBadPayload", err)
			}
			return
		}
		if e.Kind == "" || (e.Kind == forge.EventIgnored && e.Ignored == "") {
			t.Fatalf("event without kind or reason: %+v", e)
		}
	})
}

// BenchmarkParseWebhook measures verify + parse + normalize of a typical
// pull_request delivery; deliveries/s is the figure to compare with the
// 5,000/s target.
func BenchmarkParseWebhook(b *testing.B) {
	body := payload(b, "pull_request/opened.payload.json")
	sig := sign(secret, body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := ParseWebhook(delivery("pull_request", body, sig), secret, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkParseWebhookMix runs a typical mix of deliveries: pushes,
// pull request updates, reviews and comments.
func BenchmarkParseWebhookMix(b *testing.B) {
	mix := []struct{ event, file string }{
		{"push", "derived/push.branch-update.payload.json"},
		{"pull_request", "pull_request/opened.payload.json"},
		{"pull_request_review", "derived/pull_request_review.submitted.approved.payload.json"},
		{"issue_comment", "derived/issue_comment.created.on-pull-request.payload.json"},
	}
	type d struct {
		event string
		body  []byte
		sig   string
	}
	var ds []d
	for _, m := range mix {
		body := payload(b, m.file)
		ds = append(ds, d{m.event, body, sign(secret, body)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			x := ds[i%len(ds)]
			i++
			if _, err := ParseWebhook(delivery(x.event, x.body, x.sig), secret, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// TestHotEventsEveryPayload: every published payload of the events decoded
// the slim way normalizes, with its repository and (for changes) head SHA.
func TestHotEventsEveryPayload(t *testing.T) {
	t.Parallel()
	for event := range hotEvents {
		files, _ := filepath.Glob(filepath.Join(gitfixture.Root(), "testdata", "webhooks", "github", event, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no %s payloads", event)
		}
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			e, err := Normalize(event, "d", body)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if e.Repo.FullName == "" {
				t.Errorf("%s: no repository", f)
			}
			if e.Change != nil && e.Kind != forge.EventIgnored && e.Change.HeadSHA == "" && event != "issue_comment" {
				t.Errorf("%s: change without head SHA", f)
			}
		}
	}
}
