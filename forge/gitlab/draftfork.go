package gitlab

import (
	"strconv"
	"strings"
)

// The two merge request rules both intakes (webhooks and CI variables)
// apply: one place, because IsFork decides who gets secrets.

// IsDraftTitle applies GitLab's current draft rule: the title starts with
// "[Draft]", "(Draft)" or "Draft:", in any case. (GitLab before 14.0 also
// took "WIP:" and "[WIP]"; those payloads carry work_in_progress anyway.)
func IsDraftTitle(title string) bool {
	for _, p := range [...]string{"[draft]", "(draft)", "draft:"} {
		if len(title) >= len(p) && strings.EqualFold(title[:len(p)], p) {
			return true
		}
	}
	return false
}

// IsFork reports whether a merge request's source lives in another
// project than its target. An id that is missing or not a project id
// (zero or negative) counts as a fork: such a change must never get
// secrets.
func IsFork(source, target int64) bool {
	return source <= 0 || target <= 0 || source != target
}

// ProjectID parses a project id as GitLab writes it (CI variables): a
// positive decimal with no sign, padding or leading zeros. Anything else
// is 0, which IsFork treats as a fork, so a mangled variable can only make
// the bot stricter.
func ProjectID(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != s {
		return 0
	}
	return n
}
