package variant

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/porch"
)

// Tagged is a published revision's tag (a tag name as forges list it, or
// a full refs/tags/ ref) and the commit it points at.
type Tagged struct {
	Name, Commit string
}

// WorkspaceRevision is Porch's upstream.workspaceName: the published
// revision (v<N>) of pkg whose commit's Porch trailer names workspace ws;
// the highest when several do. message reads a commit's message.
func WorkspaceRevision(pkg, ws string, tags []Tagged, message func(commit string) (string, error)) (string, error) {
	best := -1
	for _, t := range tags {
		p, n, ok := porch.ParseTag(strings.TrimPrefix(t.Name, porch.TagRefPrefix))
		if !ok || p != pkg || n <= best {
			continue
		}
		msg, err := message(t.Commit)
		if err != nil {
			return "", fmt.Errorf("reading the commit of %s: %w", t.Name, err)
		}
		if tr, found, err := porch.ParseTrailer(msg); err == nil && found && tr.WorkspaceName == ws {
			best = n
		}
	}
	if best < 0 {
		return "", fmt.Errorf("upstream.workspaceName %q: no published revision of %s was made in that workspace (no tag %s/v<N> whose commit's kpt trailer names it)", ws, pkg, pkg)
	}
	return porch.RevisionName(best), nil
}

// UpstreamObject is a PackageVariantSet's CEL variable upstream, as
// Porch's (the upstream package revision: name, labels, annotations):
// the package's name and its Kptfile's metadata.labels and annotations at
// the revision the set follows.
func UpstreamObject(ctx context.Context, r Resolver, up *config.Upstream) (config.Object, error) {
	pkg := strings.Trim(up.Package, "/")
	obj := config.Object{Name: up.Package}
	rev, err := r.Latest(ctx, up)
	if err != nil {
		return obj, fmt.Errorf("resolving the upstream for the CEL variable upstream: %w", err)
	}
	files, _, err := r.Fetch(ctx, up.Repo, "/"+pkg, rev)
	if err != nil {
		return obj, fmt.Errorf("reading the upstream %s for the CEL variable upstream: %w", UpstreamName(up, rev), err)
	}
	kf, err := kptpkg.DecodeKptfile(pkg+"/"+kptpkg.KptfileName, files[kptpkg.KptfileName])
	if err != nil {
		return obj, fmt.Errorf("the CEL variable upstream: %w", err)
	}
	obj.Labels, obj.Annotations = kf.Labels, kf.Annotations
	return obj, nil
}
