package gitlab

import (
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

func repo(id int64, fullName, gitHTTPURL, httpURL, defaultBranch string) forge.Repo {
	if gitHTTPURL == "" {
		gitHTTPURL = httpURL
	}
	return forge.Repo{
		Forge:         forge.GitLab,
		FullName:      fullName,
		ID:            id,
		CloneURL:      gitHTTPURL,
		DefaultBranch: defaultBranch,
	}
}

func eventUser(u *gl.EventUser) forge.User {
	if u == nil {
		return forge.User{}
	}
	return user(u.Username, u.ID)
}

func user(login string, id int64) forge.User {
	return forge.User{Login: login, ID: id, Bot: isBotUsername(login)}
}

// isBotUsername recognizes the users GitLab creates for project and group
// access tokens (project_<id>_bot_<hex>, group_<id>_bot_<hex>; older
// instances omit the _<hex>) and for service accounts (service_account_...).
// Webhook payloads carry no bot flag.
func isBotUsername(login string) bool {
	if strings.HasPrefix(login, "service_account_") {
		return true
	}
	var rest string
	switch {
	case strings.HasPrefix(login, "project_"):
		rest = login[len("project_"):]
	case strings.HasPrefix(login, "group_"):
		rest = login[len("group_"):]
	default:
		return false
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return false
	}
	rest = rest[digits:]
	if rest == "_bot" {
		return true
	}
	if !strings.HasPrefix(rest, "_bot_") || len(rest) == len("_bot_") {
		return false
	}
	for _, c := range rest[len("_bot_"):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
