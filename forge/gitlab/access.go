package gitlab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

// userID looks a user up by username; ok is false when there is none.
func (c *Client) userID(ctx context.Context, login string) (id int64, ok bool, err error) {
	if strings.TrimSpace(login) == "" {
		return 0, false, nil
	}
	us, _, err := c.gl.Users.ListUsers(&gl.ListUsersOptions{Username: gl.Ptr(login)}, ctxOpt(ctx))
	if err != nil {
		return 0, false, c.apiError("looking up user "+login, err)
	}
	for _, u := range us {
		if strings.EqualFold(u.Username, login) {
			return u.ID, true, nil
		}
	}
	return 0, false, nil
}

// Permission implements forge.Permissions from the user's effective
// membership of the project (members/all: direct, inherited from groups
// and shared groups). Access levels map as: no access and Minimal Access
// → none; Guest, Planner, Reporter → read; Developer → write; Maintainer,
// Owner → admin. A blocked or pending member, or an unknown user, is none.
func (c *Client) Permission(ctx context.Context, r forge.Repo, login string) (forge.Permission, error) {
	id, err := pid(r)
	if err != nil {
		return "", err
	}
	uid, ok, err := c.userID(ctx, login)
	if err != nil || !ok {
		return forge.PermissionNone, err
	}
	m, _, err := c.gl.ProjectMembers.GetInheritedProjectMember(id, uid, ctxOpt(ctx))
	if errors.Is(err, gl.ErrNotFound) {
		// No membership, or no such project: tell them apart.
		if _, perr := c.project(ctx, r); perr != nil {
			return "", perr
		}
		return forge.PermissionNone, nil
	}
	if err != nil {
		return "", c.apiError(fmt.Sprintf("reading %s's membership of %s", login, r.FullName), err)
	}
	if m.State != "" && m.State != "active" {
		return forge.PermissionNone, nil
	}
	return permission(m.AccessLevel), nil
}

func permission(level gl.AccessLevelValue) forge.Permission {
	switch {
	case level >= gl.MaintainerPermissions:
		return forge.PermissionAdmin
	case level >= gl.DeveloperPermissions:
		return forge.PermissionWrite
	case level >= gl.GuestPermissions:
		return forge.PermissionRead
	default:
		return forge.PermissionNone
	}
}

// TeamMember implements forge.Teams: team is a group's full path
// (group/subgroup), and membership includes what is inherited from parent
// groups. A group that does not exist is ErrNotFound, so a typo in an
// approver list is an error rather than "nobody is a member".
func (c *Client) TeamMember(ctx context.Context, _ forge.Repo, team, login string) (bool, error) {
	team = strings.Trim(team, "/")
	if team == "" {
		return false, errors.New("team: want a GitLab group path")
	}
	op := fmt.Sprintf("reading %s's membership of group %s", login, team)
	uid, ok, err := c.userID(ctx, login)
	if err != nil || !ok {
		return false, err
	}
	m, _, err := c.gl.GroupMembers.GetInheritedGroupMember(team, uid, ctxOpt(ctx))
	if errors.Is(err, gl.ErrNotFound) {
		if _, _, gerr := c.gl.Groups.GetGroup(team, nil, ctxOpt(ctx)); gerr != nil {
			return false, c.apiError(op, gerr)
		}
		return false, nil
	}
	if err != nil {
		return false, c.apiError(op, err)
	}
	return m.State == "" || m.State == "active", nil
}

// Self returns the token's own user. The bot needs it as its GitLab login
// (bot.Options.Logins): only notes by that user hold the bot's state, and
// GitLab names a project or group token's user project_<id>_bot_<hex>,
// not after the bot.
func (c *Client) Self(ctx context.Context) (forge.User, error) {
	u, _, err := c.gl.Users.CurrentUser(ctxOpt(ctx))
	if err != nil {
		return forge.User{}, c.apiError("reading the token's user", err)
	}
	return forge.User{Login: u.Username, ID: u.ID, Bot: u.Bot || isBotUsername(u.Username)}, nil
}
