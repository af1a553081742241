package forge

import "context"

// Unavailable is a forge every call of which fails with err: the stand-in
// Compose puts in place of a missing role, and what a caller can hold for
// a repository whose forge could not be resolved, so the failure shows
// where the repository is used.
func Unavailable(err error) Forge {
	u := unavailable{err}
	return Forge{FileReader: u, TreeReader: u, CommitLogger: u, RefLister: u, Pusher: u,
		ChangeReader: u, ChangeWriter: u, Tagger: u, Commenter: u, CommentReader: u, Issues: u, Teams: u,
		Permissions: u, Checks: u, Dispatcher: u}
}

// unavailable implements every role (and RepoLister) by failing.
type unavailable struct{ err error }

func (u unavailable) ReadFile(context.Context, Repo, string, string) ([]byte, error) {
	return nil, u.err
}

func (u unavailable) ListTree(context.Context, Repo, string, string) ([]string, error) {
	return nil, u.err
}

func (u unavailable) ReadTree(context.Context, Repo, string, string) (Snapshot, error) {
	return Snapshot{}, u.err
}

func (u unavailable) Log(context.Context, Repo, string, string) ([]Commit, error) {
	return nil, u.err
}

func (u unavailable) ListTags(context.Context, Repo) ([]Tag, error) { return nil, u.err }

func (u unavailable) ListBranches(context.Context, Repo) ([]Branch, error) { return nil, u.err }

func (u unavailable) PushFiles(context.Context, Repo, string, string, string, map[string][]byte, string) (string, error) {
	return "", u.err
}

func (u unavailable) DeleteBranch(context.Context, Repo, string, string) error { return u.err }

func (u unavailable) ListChangesByHead(context.Context, Repo, string) ([]Change, error) {
	return nil, u.err
}

func (u unavailable) ListOpenChanges(context.Context, Repo) ([]Change, error) { return nil, u.err }

func (u unavailable) GetChange(context.Context, Repo, int) (Change, error) {
	return Change{}, u.err
}

func (u unavailable) ListReviews(context.Context, Repo, int) ([]Review, error) { return nil, u.err }

func (u unavailable) OpenChange(context.Context, Repo, ChangeSpec) (Change, error) {
	return Change{}, u.err
}

func (u unavailable) UpdateChange(context.Context, Repo, int, ChangeUpdate) (Change, error) {
	return Change{}, u.err
}

func (u unavailable) CloseChange(context.Context, Repo, int) error { return u.err }

func (u unavailable) Merge(context.Context, Repo, int, string, string) (string, error) {
	return "", u.err
}

func (u unavailable) CreateTag(context.Context, Repo, string, string, string) error { return u.err }

func (u unavailable) Comment(context.Context, Repo, int, string) (Comment, error) {
	return Comment{}, u.err
}

func (u unavailable) ListComments(context.Context, Repo, int) ([]Comment, error) {
	return nil, u.err
}

func (u unavailable) ReadComment(context.Context, Repo, int, int64) (Comment, error) {
	return Comment{}, u.err
}

func (u unavailable) EditComment(context.Context, Repo, int, int64, string) error { return u.err }

func (u unavailable) React(context.Context, Repo, int, int64, string) error { return u.err }

func (u unavailable) ListIssues(context.Context, Repo, string) ([]Issue, error) { return nil, u.err }

func (u unavailable) OpenIssue(context.Context, Repo, string, string, []string) (Issue, error) {
	return Issue{}, u.err
}

func (u unavailable) EditIssue(context.Context, Repo, int, string, string) error { return u.err }

func (u unavailable) TeamMember(context.Context, Repo, string, string) (bool, error) {
	return false, u.err
}

func (u unavailable) Permission(context.Context, Repo, string) (Permission, error) {
	return PermissionNone, u.err
}

func (u unavailable) ReportCheck(context.Context, Repo, CheckReport) error { return u.err }

func (u unavailable) RequiredChecks(context.Context, Repo, string) ([]string, error) {
	return nil, u.err
}

func (u unavailable) Dispatch(context.Context, Repo, string, map[string]any) error { return u.err }

func (u unavailable) ListRepos(context.Context) ([]Repo, error) { return nil, u.err }
