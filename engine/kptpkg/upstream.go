package kptpkg

import (
	"fmt"

	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// GenericOrigin is the upstream type kptbot records for packages from an
// OCI registry or an HTTP archive (upstream.type and upstreamLock.type).
const GenericOrigin kptfilev1.OriginType = "generic"

// The generic upstream and lock ({storeID, resourceID, resourceVersion})
// live in Kptfile annotations, not under upstream/upstreamLock: kpt (through
// v1.0.0-beta.61) decodes the Kptfile strictly, and an unknown
// upstream.generic field makes every kpt command, `kpt fn render`
// included, reject the package. Annotations are free-form, so kpt and
// Porch keep reading, rendering and carrying these Kptfiles.
const (
	AnnotationUpstreamStoreID         = "kptbot.dev/upstream-store-id"
	AnnotationUpstreamResourceID      = "kptbot.dev/upstream-resource-id"
	AnnotationUpstreamResourceVersion = "kptbot.dev/upstream-resource-version"
	AnnotationLockStoreID             = "kptbot.dev/upstream-lock-store-id"
	AnnotationLockResourceID          = "kptbot.dev/upstream-lock-resource-id"
	AnnotationLockResourceVersion     = "kptbot.dev/upstream-lock-resource-version"
)

var genericAnnotations = []string{
	AnnotationUpstreamStoreID, AnnotationUpstreamResourceID, AnnotationUpstreamResourceVersion,
	AnnotationLockStoreID, AnnotationLockResourceID, AnnotationLockResourceVersion,
}

// Origin is where a package comes from, whichever store holds it: a git
// repository (Kptfile upstream.git) or an OCI repository or HTTP archive
// (the generic upstream).
type Origin struct {
	// Store is locator.Git, locator.OCI or locator.HTTP.
	Store string `json:"store"`
	// Repo, Dir and Ref are the repository (git URL, oci://REGISTRY/REPO
	// or archive URL), the package in it ("/pkg") and the requested
	// version (git ref, tag, digest or template version).
	Repo string `json:"repo"`
	Dir  string `json:"dir"`
	Ref  string `json:"ref,omitempty"`
}

// String names the origin the way a user would write it.
func (o Origin) String() string {
	if o.Store == locator.Git || o.Store == "" {
		if o.Ref == "" {
			return o.Repo + o.Dir
		}
		return o.Repo + o.Dir + "@" + o.Ref
	}
	return locator.WithVersion(locator.ResourceID(o.Repo, o.Dir), o.Ref)
}

// Lock is a resolved origin: Ref is what the version resolved to (tag,
// template version or git ref) and Commit the content's identity (git
// commit, OCI manifest digest, archive sha256).
type Lock struct {
	Origin
	Commit string `json:"commit"`
}

// FetchArgs are the Fetch arguments that reproduce the locked content
// byte for byte: the commit, or the digest (an HTTP archive is pinned
// with #sha256= on its URL).
func (l Lock) FetchArgs() (repo, dir, version string) {
	if l.Store == locator.HTTP {
		return locator.WithPin(l.Repo, l.Commit), l.Dir, ""
	}
	return l.Repo, l.Dir, l.Commit
}

// UpstreamOf reads a Kptfile's upstream, git or generic; nil when it has none.
func UpstreamOf(kf *kptfilev1.KptFile) (*Origin, error) {
	u := kf.Upstream
	if u == nil {
		return nil, nil
	}
	switch {
	case u.Type == GenericOrigin:
		return genericOrigin(kf, "upstream", AnnotationUpstreamStoreID, AnnotationUpstreamResourceID, AnnotationUpstreamResourceVersion)
	case u.Git != nil && (u.Type == kptfilev1.GitOrigin || u.Type == ""):
		return &Origin{Store: locator.Git, Repo: u.Git.Repo, Dir: u.Git.Directory, Ref: u.Git.Ref}, nil
	case u.Type == "" || u.Type == kptfilev1.GitOrigin:
		return nil, nil
	}
	return nil, fmt.Errorf("upstream.type %q: expected git or generic", u.Type)
}

// LockOf reads a Kptfile's upstreamLock, git or generic; nil when it has none.
func LockOf(kf *kptfilev1.KptFile) (*Lock, error) {
	l := kf.UpstreamLock
	if l == nil {
		return nil, nil
	}
	switch {
	case l.Type == GenericOrigin:
		o, err := genericOrigin(kf, "upstreamLock", AnnotationLockStoreID, AnnotationLockResourceID, AnnotationLockResourceVersion)
		if err != nil {
			return nil, err
		}
		digest := o.Ref
		if !locator.IsDigest(digest) {
			return nil, fmt.Errorf("upstreamLock: annotation %s: %q is not a sha256 digest (sha256: and 64 hex digits)", AnnotationLockResourceVersion, digest)
		}
		// The lock's resource ID carries the tag or version it resolved.
		ref, _, _ := locator.Parse(kf.Annotations[AnnotationLockResourceID])
		o.Ref = ref.Version
		return &Lock{Origin: *o, Commit: digest}, nil
	case l.Git != nil && (l.Type == kptfilev1.GitOrigin || l.Type == ""):
		return &Lock{Origin: Origin{Store: locator.Git, Repo: l.Git.Repo, Dir: l.Git.Directory, Ref: l.Git.Ref}, Commit: l.Git.Commit}, nil
	case l.Type == "" || l.Type == kptfilev1.GitOrigin:
		return nil, nil
	}
	return nil, fmt.Errorf("upstreamLock.type %q: expected git or generic", l.Type)
}

// genericOrigin reads one generic {storeID, resourceID, resourceVersion}
// from the Kptfile's annotations.
func genericOrigin(kf *kptfilev1.KptFile, field, storeKey, idKey, versionKey string) (*Origin, error) {
	a := kf.Annotations
	id := a[idKey]
	if id == "" {
		return nil, fmt.Errorf("%s.type is generic but metadata.annotations[%s] is missing: expected the upstream's resource ID (oci://... or an archive URL)", field, idKey)
	}
	ref, ok, err := locator.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("metadata.annotations[%s]: %w", idKey, err)
	}
	if !ok {
		return nil, fmt.Errorf("metadata.annotations[%s]: %q is neither an oci:// reference nor an http(s) archive URL", idKey, id)
	}
	store := locator.Store(id)
	if s := a[storeKey]; s != store {
		return nil, fmt.Errorf("metadata.annotations[%s]: %q does not match the resource ID %s: expected %q", storeKey, s, id, store)
	}
	version := a[versionKey]
	if version == "" {
		version = ref.Version
	}
	return &Origin{Store: store, Repo: ref.Repo, Dir: ref.Dir, Ref: version}, nil
}

// SetUpstream records o as kf's upstream, in the git or the generic form.
func SetUpstream(kf *kptfilev1.KptFile, o Origin, strategy kptfilev1.UpdateStrategyType) {
	if o.Store == "" {
		o.Store = locator.Store(o.Repo)
	}
	if o.Store == locator.Git {
		kf.Upstream = &kptfilev1.Upstream{Type: kptfilev1.GitOrigin, Git: &kptfilev1.Git{Repo: o.Repo, Directory: o.Dir, Ref: o.Ref}, UpdateStrategy: strategy}
		deleteAnnotations(kf, AnnotationUpstreamStoreID, AnnotationUpstreamResourceID, AnnotationUpstreamResourceVersion)
		return
	}
	kf.Upstream = &kptfilev1.Upstream{Type: GenericOrigin, UpdateStrategy: strategy}
	setAnnotation(kf, AnnotationUpstreamStoreID, o.Store)
	setAnnotation(kf, AnnotationUpstreamResourceID, locator.ResourceID(o.Repo, o.Dir))
	setAnnotation(kf, AnnotationUpstreamResourceVersion, o.Ref)
}

// SetLock records l as kf's upstreamLock.
func SetLock(kf *kptfilev1.KptFile, l Lock) {
	if l.Store == "" {
		l.Store = locator.Store(l.Repo)
	}
	if l.Store == locator.Git {
		kf.UpstreamLock = &kptfilev1.UpstreamLock{Type: kptfilev1.GitOrigin, Git: &kptfilev1.GitLock{Repo: l.Repo, Directory: l.Dir, Ref: l.Ref, Commit: l.Commit}}
		deleteAnnotations(kf, AnnotationLockStoreID, AnnotationLockResourceID, AnnotationLockResourceVersion)
		return
	}
	kf.UpstreamLock = &kptfilev1.UpstreamLock{Type: GenericOrigin}
	id := locator.ResourceID(l.Repo, l.Dir)
	if !locator.IsDigest(l.Ref) {
		id = locator.WithVersion(id, l.Ref)
	}
	setAnnotation(kf, AnnotationLockStoreID, l.Store)
	setAnnotation(kf, AnnotationLockResourceID, id)
	setAnnotation(kf, AnnotationLockResourceVersion, l.Commit)
}

// LockFrom is the lock for fetching o with resolution r. An archive's lock
// names the URL actually fetched (its template filled, no pin: the lock's
// digest pins it).
func LockFrom(o Origin, r fetch.Resolved) Lock {
	l := Lock{Origin: o, Commit: r.Commit}
	l.Ref = r.Ref
	if o.Store == locator.HTTP {
		url, _ := locator.SplitPin(o.Repo)
		l.Repo = locator.Expand(url, r.Ref)
		l.Ref = ""
	}
	return l
}

// CopyUpstream gives dst src's upstream, upstreamLock and generic
// annotations, so two Kptfiles compare equal on everything else.
func CopyUpstream(dst, src *kptfilev1.KptFile) {
	dst.Upstream, dst.UpstreamLock = src.Upstream, src.UpstreamLock
	deleteAnnotations(dst, genericAnnotations...)
	for _, k := range genericAnnotations {
		if v, ok := src.Annotations[k]; ok {
			setAnnotation(dst, k, v)
		}
	}
}

func setAnnotation(kf *kptfilev1.KptFile, key, value string) {
	if value == "" {
		deleteAnnotations(kf, key)
		return
	}
	if kf.Annotations == nil {
		kf.Annotations = map[string]string{}
	}
	kf.Annotations[key] = value
}

func deleteAnnotations(kf *kptfilev1.KptFile, keys ...string) {
	for _, k := range keys {
		delete(kf.Annotations, k)
	}
	if len(kf.Annotations) == 0 {
		kf.Annotations = nil
	}
}
