package gitstore

import (
	"os"

	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// PersonAuthor is the git identity of whoever runs the CLI: GIT_AUTHOR_NAME
// and GIT_AUTHOR_EMAIL, else the global git config, else user@host. A
// person's commits are signed as that person, so the variant reconciler
// (which signs as kptbot) knows to leave them alone.
func PersonAuthor() object.Signature {
	name, email := os.Getenv("GIT_AUTHOR_NAME"), os.Getenv("GIT_AUTHOR_EMAIL")
	if name == "" || email == "" {
		if cfg, err := gitconfig.LoadConfig(gitconfig.GlobalScope); err == nil {
			name, email = firstNonEmpty(name, cfg.User.Name), firstNonEmpty(email, cfg.User.Email)
		}
	}
	if email == "" {
		host, _ := os.Hostname()
		u := os.Getenv("USER")
		email = firstNonEmpty(u, "user") + "@" + firstNonEmpty(host, "localhost")
	}
	return object.Signature{Name: firstNonEmpty(name, email), Email: email}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
