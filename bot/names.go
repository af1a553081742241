package bot

import (
	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
)

// The bot's flows apply the review package's rules for what the bot
// trusts and echoes; these short names keep the call sites readable.

func code(s string) string                  { return review.Code(s) }
func userText(s string) string              { return review.UserText(s) }
func isSelf(u forge.User, self string) bool { return review.IsSelf(u, self) }
func sameLogin(a, b string) bool            { return review.SameLogin(a, b) }
func short(sha string) string               { return review.Short(sha) }
func contains(list []string, s string) bool { return check.Contains(list, s) }

// BodyMarker is the descriptive marker in the body of a change the bot
// opened (review.BodyMarker).
type BodyMarker = review.BodyMarker

// ParseMarker finds a change body's marker (review.ParseMarker).
func ParseMarker(body string) (BodyMarker, bool) { return review.ParseMarker(body) }

// FormatMarker renders the hidden marker for a change body.
func FormatMarker(m BodyMarker) string { return review.FormatMarker(m) }

// Policy is the server's function policy (check.Policy).
type Policy = check.Policy
