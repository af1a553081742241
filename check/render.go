// Package check renders one package of a change the way the bot reports
// it: at the change's head, with the repository's guardrails appended,
// under the server's function policy and a time budget, and with the
// digests and resource diff that approvals and the check summary use. It
// does no forge I/O.
package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/kptbot/kptbot/review"
)

// Policy is the server's function policy: what may run beyond the
// built-in functions. A PR head's exec and container functions run only
// when this allows them and the function is already on the default branch.
type Policy struct {
	AllowExec       bool
	AllowContainers bool
	// AllowedImages are container images allowed beyond the built-ins.
	AllowedImages []string
}

// Checker renders packages of changes under one server's settings.
type Checker struct {
	Functions Policy
	// Timeout is each package render's time budget (zero:
	// DefaultRenderTimeout).
	Timeout time.Duration
}

// Severity grades a Finding: "error" or "warning".
type Severity string

// Severities, as kpt's results and the bot's problems spell them.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is an error or warning about the package, at a repository file
// and line when known.
type Finding struct {
	Severity Severity
	File     string
	Line     int
	Message  string
}

// Result is one package rendered at a change's head.
type Result struct {
	// Dir is the package's repository path, Name its package name.
	Dir     string
	Name    string
	Deleted bool
	OK      bool
	// Message is the render or policy error, for the check.
	Message  string
	Findings []Finding
	Digest   string
	Diff     ResourceDiff
}

// Package renders a package as the change's head has it, with guardrails
// appended, under the function policy. base is the package's files at
// the change's fork point (nil when new), for the diff summary; trusted
// is the package on the default branch, whose functions the head may run.
func (c Checker) Package(ctx context.Context, guardrails *config.Pipeline, dir, name string, head, base, trusted kptpkg.Tree, fork bool) Result {
	res := Result{Dir: dir, Name: name}
	if len(head) == 0 {
		res.Deleted, res.OK, res.Digest = true, true, "deleted"
		res.Diff = DiffResources(base, nil)
		return res
	}
	in, rt, err := c.prepare(guardrails, head, trusted, fork)
	if err != nil {
		res.Message = err.Error()
		res.Findings = append(res.Findings, Finding{Severity: SeverityError, File: dir + "/Kptfile", Message: err.Error()})
		return res
	}
	r, err := c.renderWithin(ctx, in, render.RenderOptions{Runtimes: rt, Dir: dir})
	if err == nil {
		for _, p := range resultFindings(dir, r.Results) {
			if p.Severity == SeverityWarning {
				res.Findings = append(res.Findings, p)
			}
		}
	}
	if err != nil {
		res.Message = err.Error()
		res.Findings = append(res.Findings, renderFindings(dir, err)...)
		return res
	}
	res.OK = true
	res.Digest = DigestTree(r.Tree)
	res.Diff = DiffResources(base, r.Tree)
	return res
}

// DefaultRenderTimeout is a package render's time budget unless
// Options.RenderTimeout says otherwise: generous for real pipelines, short
// enough that a looping function cannot hold a worker.
const DefaultRenderTimeout = 2 * time.Minute

// renderTimeout is the budget in force.
func (c Checker) renderTimeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultRenderTimeout
}

// errRenderBudget is a render that ran past its time budget.
var errRenderBudget = errors.New("render exceeded its time budget")

// renderWithin renders under the time budget. The engine is given the
// deadline to stop at; should a function not honour it, the bot still
// stops waiting at the deadline and reports the render as failed (the
// function's goroutine ends when the engine next checks its context).
func (c Checker) renderWithin(ctx context.Context, in kptpkg.Tree, opts render.RenderOptions) (*render.RenderResult, error) {
	budget := c.renderTimeout()
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	type outcome struct {
		r   *render.RenderResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("render panicked: %v", p)}
			}
		}()
		r, err := render.RenderTree(ctx, in, opts)
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return o.r, fmt.Errorf("%w (%s): %w", errRenderBudget, budget, o.err)
		}
		return o.r, o.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (%s); the pipeline was stopped", errRenderBudget, budget)
		}
		return nil, ctx.Err()
	}
}

// prepare appends the guardrails to the package's pipeline and decides
// the runtimes: built-ins always; exec and container functions only when
// the server policy allows them, the change is not from a fork, and the
// same function is already in the trusted (default-branch) package or the
// guardrails, so a PR cannot bring its own binary to run.
func (ck Checker) prepare(g *config.Pipeline, head, trusted kptpkg.Tree, fork bool) (kptpkg.Tree, render.Runtimes, error) {
	in := kptpkg.Tree{}
	for p, c := range head {
		in[p] = c
	}
	kf, err := kptpkg.DecodeKptfile("Kptfile", head[kptpkg.KptfileName])
	if err != nil {
		return nil, render.Runtimes{}, err
	}
	allowed := map[string]bool{}
	if g != nil {
		for _, f := range functions(g.Mutators, g.Validators) {
			allowed[fnKey(f)] = true
		}
	}
	for p, c := range trusted {
		if strings.HasSuffix(p, kptpkg.KptfileName) {
			if tk, err := kptpkg.DecodeKptfile(p, c); err == nil && tk.Pipeline != nil {
				for _, f := range functions(tk.Pipeline.Mutators, tk.Pipeline.Validators) {
					allowed[fnKey(f)] = true
				}
			}
		}
	}
	rt := render.Runtimes{}
	for p, c := range head {
		if !strings.HasSuffix(p, kptpkg.KptfileName) {
			continue
		}
		k, err := kptpkg.DecodeKptfile(p, c)
		if err != nil {
			return nil, rt, err
		}
		if k.Pipeline == nil {
			continue
		}
		for _, f := range functions(k.Pipeline.Mutators, k.Pipeline.Validators) {
			if err := ck.mayRun(f, allowed, fork); err != nil {
				return nil, rt, fmt.Errorf("%s: %w", p, err)
			}
			if f.Exec != "" {
				rt.AllowExec = true
			} else if _, ok := builtins.Lookup(f.Image); !ok {
				rt.AllowContainers = true
			}
		}
	}
	if g != nil && (len(g.Mutators) > 0 || len(g.Validators) > 0) {
		if kf.Pipeline == nil {
			kf.Pipeline = &kptfilev1.Pipeline{}
		}
		kf.Pipeline.Mutators = append(kf.Pipeline.Mutators, g.Mutators...)
		kf.Pipeline.Validators = append(kf.Pipeline.Validators, g.Validators...)
		for _, f := range functions(g.Mutators, g.Validators) {
			if f.Exec != "" && ck.Functions.AllowExec {
				rt.AllowExec = true
			} else if _, ok := builtins.Lookup(f.Image); !ok && f.Image != "" && ck.Functions.AllowContainers {
				rt.AllowContainers = true
			}
		}
		out, err := yaml.Marshal(kf)
		if err != nil {
			return nil, rt, fmt.Errorf("adding guardrails to the Kptfile: %w", err)
		}
		in[kptpkg.KptfileName] = out
	}
	return in, rt, nil
}

// functions lists a pipeline's mutators then validators.
func functions(mutators, validators []kptfilev1.Function) []kptfilev1.Function {
	return append(append([]kptfilev1.Function(nil), mutators...), validators...)
}

func fnKey(f kptfilev1.Function) string {
	if f.Exec != "" {
		return "exec:" + f.Exec
	}
	return "image:" + f.Image
}

// mayRun applies the function policy to one function of a change's head.
func (c Checker) mayRun(f kptfilev1.Function, trusted map[string]bool, fork bool) error {
	if f.Exec == "" {
		if _, ok := builtins.Lookup(f.Image); ok {
			return nil
		}
	}
	what := "image " + f.Image
	if f.Exec != "" {
		what = "exec " + f.Exec
	}
	p := c.Functions
	switch {
	case fork:
		return fmt.Errorf("function %s is not built in, and changes from forks run built-in functions only", what)
	case f.Exec != "" && !p.AllowExec:
		return fmt.Errorf("function %s: exec functions are not allowed by the server's policy (functions.allowExec)", what)
	case f.Exec == "" && !p.AllowContainers:
		return fmt.Errorf("function %s is not built in and container functions are not allowed by the server's policy (functions.allowContainers)", what)
	case f.Exec == "" && !Contains(p.AllowedImages, f.Image):
		return fmt.Errorf("function %s is not in the server's functions.allowedImages", what)
	case !trusted[fnKey(f)]:
		return fmt.Errorf("function %s comes from this change, not from the default branch: only built-in functions run from a change's head", what)
	}
	return nil
}

// Contains reports whether list holds s.
func Contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// renderFindings places a failed render's results at files and lines; a
// failure without results is one finding on the package's Kptfile.
func renderFindings(dir string, err error) []Finding {
	var out []Finding
	var re *render.RenderError
	if errors.As(err, &re) {
		out = resultFindings(dir, re.Results)
	}
	if len(out) == 0 {
		out = append(out, Finding{Severity: SeverityError, File: dir + "/Kptfile", Message: err.Error()})
	}
	return out
}

// resultFindings turns the functions' error and warning results into
// findings at the files they name.
func resultFindings(dir string, results *fnresults.List) []Finding {
	if results == nil {
		return nil
	}
	var out []Finding
	for _, item := range results.Items {
		for _, ri := range item.Results {
			if ri.Severity != "error" && ri.Severity != "warning" {
				continue
			}
			// A result without a file is about the pipeline, which the
			// package's Kptfile holds: annotate that.
			p := Finding{Severity: Severity(ri.Severity), File: dir + "/Kptfile", Message: fmt.Sprintf("%s: %s", item.Image+item.ExecPath, ri.Message)}
			if ri.File != nil && ri.File.Path != "" {
				p.File = dir + "/" + ri.File.Path
			}
			out = append(out, p)
		}
	}
	return out
}

// DigestTree is the rendered output's identity: equal digests mean a
// reviewer would see the same package.
func DigestTree(t kptpkg.Tree) string {
	h := sha256.New()
	for _, p := range t.Paths() {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(t[p]))
		h.Write(t[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CombinedDigest is the digest of every package a change touches.
func CombinedDigest(rs []Result) string {
	h := sha256.New()
	for _, r := range rs {
		fmt.Fprintf(h, "%s=%s\n", r.Dir, r.Digest)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ChangeDigest is the identity of a whole change: every path that differs
// between the fork point (base) and the head, with its new content or its
// deletion. Two heads with equal change digests propose the same edit to
// the repository, whatever else moved on the base branch; a head that
// also adds a workflow or a kptbot.yaml differs.
func ChangeDigest(base, head map[string][]byte) string {
	paths := ChangedPaths(base, head)
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		c, ok := head[p]
		if !ok {
			fmt.Fprintf(h, "%s\x00deleted\x00", p)
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(c))
		h.Write(c)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ResourceDiff is the resource-level summary of a rendered change.
type ResourceDiff struct {
	Added, Changed, Removed []string
}

// DiffResources compares the resources of two package trees by
// apiVersion, kind, namespace and name.
func DiffResources(before, after kptpkg.Tree) ResourceDiff {
	a, b := resources(before), resources(after)
	var d ResourceDiff
	for id, y := range b {
		old, ok := a[id]
		switch {
		case !ok:
			d.Added = append(d.Added, id)
		case old != y:
			d.Changed = append(d.Changed, id)
		}
	}
	for id := range a {
		if _, ok := b[id]; !ok {
			d.Removed = append(d.Removed, id)
		}
	}
	sort.Strings(d.Added)
	sort.Strings(d.Changed)
	sort.Strings(d.Removed)
	return d
}

// resources maps "Kind namespace/name" to the resource's normalized YAML
// (comments and kpt's bookkeeping annotations dropped).
func resources(t kptpkg.Tree) map[string]string {
	out := map[string]string{}
	for _, p := range t.Paths() {
		if (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) || strings.HasSuffix(p, kptpkg.KptfileName) {
			continue
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(t[p]), OmitReaderAnnotations: true}).Read()
		if err != nil {
			continue
		}
		for _, n := range nodes {
			if n.GetKind() == "" {
				continue
			}
			id := n.GetKind() + " " + n.GetName()
			if ns := n.GetNamespace(); ns != "" {
				id = n.GetKind() + " " + ns + "/" + n.GetName()
			}
			_ = n.PipeE(yaml.ClearAnnotation("config.kubernetes.io/index"), yaml.ClearAnnotation("internal.config.kubernetes.io/index"))
			out[id] = n.MustString()
		}
	}
	return out
}

// Summary formats the diff for a check.
func (d ResourceDiff) Summary() string {
	if len(d.Added)+len(d.Changed)+len(d.Removed) == 0 {
		return "No resource changes against the base."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d added, %d changed, %d removed against the base.\n\n", len(d.Added), len(d.Changed), len(d.Removed))
	for _, g := range []struct {
		title string
		ids   []string
	}{{"Added", d.Added}, {"Changed", d.Changed}, {"Removed", d.Removed}} {
		if len(g.ids) == 0 {
			continue
		}
		fmt.Fprintf(&b, "**%s**\n", g.title)
		for _, id := range g.ids {
			fmt.Fprintf(&b, "- %s\n", review.Code(id)) // a name may hold line breaks and backticks
		}
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String())
}

// ChangedPaths are the paths whose content differs between trees a and
// b, including those only one of them has.
func ChangedPaths(a, b map[string][]byte) []string {
	var out []string
	for p, c := range b {
		if old, ok := a[p]; !ok || string(old) != string(c) {
			out = append(out, p)
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}
