package builtins

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/fieldspec"
	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptbot/kptbot/internal/yamlnode"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// streamSetLabelsV02 is set-labels as the catalog's current release line
// (v0.2, functions/go/set-labels/setlabels) writes it, rule for rule:
// metadata.labels of every resource but package-local config; the
// selector of a v1 Service or ReplicationController; the matchLabels of a
// Deployment, ReplicaSet, DaemonSet or apps StatefulSet selector (created)
// and of a batch Job or policy PodDisruptionBudget selector (only where
// present); the pod template's labels where the resource has a template
// (never creating one), with its topology spread and affinity selectors;
// a CronJob's job template; a StatefulSet's volume claim templates; a
// NetworkPolicy's pod selectors. Its count is the catalog's: every label
// at every place visited, changed or not. Without a function config it
// does not stream (runSetLabelsV02).
// errNoFunctionConfig: set-labels v0.2 was given no function config.
var errNoFunctionConfig = errors.New("`FunctionConfig` is not given")

// runSetLabelsV02 is set-labels v0.2 on the whole list. Given no function
// config (kpt render's none, kpt fn eval's empty "function-input"), the
// catalog's SDK reports "`FunctionConfig` is not given" and the function
// then fails without another result, unless there is no resource but
// package-local config to label.
func runSetLabelsV02(rl *resourcelist.List) error {
	if resourcelist.KindOf(rl.FunctionConfig).Kind != "" {
		return streamed(streamSetLabelsV02)(rl)
	}
	rl.Results = append(rl.Results, &fn.Result{Message: errNoFunctionConfig.Error(), Severity: fn.Info})
	for _, it := range rl.Items {
		if !resourcelist.IsLocalConfig(it) {
			return errFunctionFailure
		}
	}
	rl.Results = append(rl.Results, &fn.Result{Message: "no input resources", Severity: fn.Info})
	return nil
}

func streamSetLabelsV02(cfg *yaml.RNode) (*Stream, error) {
	k := resourcelist.KindOf(cfg)
	var want map[string]string
	var err error
	switch {
	case k.IsConfigMap():
		want, err = resourcelist.StringMap(cfg, "data")
	case k.Is("SetLabels"):
		want, err = resourcelist.StringMap(cfg, "labels")
	case k.Kind == "":
		return nil, errNoFunctionConfig
	default:
		// the SDK's message, which names kinds as group-qualified kinds
		gk := k.Kind
		if k.Group != "" {
			gk += "." + k.Group
		}
		return nil, fmt.Errorf("unknown FunctionConfig `%s`, expect `SetLabels.fn.kpt.dev` or `ConfigMap.v1`", gk)
	}
	if err != nil {
		return nil, err
	}
	s := &labelSetter{keys: yaml.SortedMapKeys(want), want: want}
	return &Stream{
		apply: s.apply,
		finish: func(pieces []Piece) fn.Results {
			objects, count := 0, 0
			var out fn.Results
			for _, p := range pieces {
				objects += p.objects
				count += p.count
				out = append(out, p.results...)
			}
			switch {
			case objects == 0:
				return fn.Results{{Message: "no input resources", Severity: fn.Info}}
			case len(want) == 0:
				return fn.Results{{Message: "no `labels` arguments are given in FunctionConfig", Severity: fn.Warning}}
			}
			return append(out, &fn.Result{Message: fmt.Sprintf("set %v labels in total", count), Severity: fn.Info})
		},
		// per-resource results are errors only, which a renderer does not stream
		unordered: true,
	}, nil
}

type labelSetter struct {
	keys []string
	want map[string]string
}

func (s *labelSetter) apply(items []*yaml.RNode) (Piece, error) {
	var p Piece
	for _, it := range items {
		if resourcelist.IsLocalConfig(it) {
			continue
		}
		p.objects++
		if len(s.keys) == 0 {
			continue
		}
		n, err := s.object(it)
		p.count += n
		if err != nil {
			p.results = append(p.results, &fn.Result{Message: err.Error(), Severity: fn.Error})
		}
	}
	return p, nil
}

// gvk matches a resource as the SDK's IsGVK: an empty group, version or
// kind, asked for or the resource's own, matches any (so a resource
// without apiVersion and kind, a kustomization.yaml kpt lets through, is
// every kind at once).
func gvk(n *yaml.RNode, group, version, kind string) bool {
	if k := n.GetKind(); k != "" && k != kind {
		return false
	}
	g, v, ok := strings.Cut(n.GetApiVersion(), "/")
	if !ok {
		g, v = "", g
	}
	return (g == "" || group == "" || g == group) && (v == "" || version == "" || v == version)
}

// object labels one resource; n counts the labels visited.
func (s *labelSetter) object(it *yaml.RNode) (n int, err error) {
	o := mapNode(it.YNode())
	visit := func(m *yaml.Node, create bool, path ...string) {
		if err != nil || m == nil {
			return
		}
		n += len(s.keys)
		err = s.update(m, create, path...)
	}
	visit(o, true, "metadata", "labels")
	if gvk(it, "", "v1", "Service") || gvk(it, "", "v1", "ReplicationController") {
		visit(o, true, "spec", "selector")
	}
	switch {
	case gvk(it, "", "", "Deployment"), gvk(it, "", "", "ReplicaSet"), gvk(it, "", "", "DaemonSet"), gvk(it, "apps", "", "StatefulSet"):
		visit(o, true, "spec", "selector", "matchLabels")
	case gvk(it, "batch", "", "Job"), gvk(it, "policy", "", "PodDisruptionBudget"):
		visit(o, false, "spec", "selector", "matchLabels")
	}
	netpol := gvk(it, "networking.k8s.io", "", "NetworkPolicy")
	if netpol {
		visit(o, false, "spec", "podSelector", "matchLabels")
	}
	spec := child(o, "spec")
	if err != nil || spec == nil {
		return n, err
	}
	if gvk(it, "", "v1", "ReplicationController") || gvk(it, "", "", "Deployment") || gvk(it, "", "", "ReplicaSet") ||
		gvk(it, "", "", "DaemonSet") || gvk(it, "apps", "", "StatefulSet") || gvk(it, "batch", "", "Job") {
		s.pod(child(spec, "template"), visit)
		if err != nil {
			// the catalog drops a pod template error and the rest of
			// the resource with it
			return n, nil
		}
	}
	if gvk(it, "batch", "", "CronJob") {
		if job := child(spec, "jobTemplate"); job != nil {
			visit(job, true, "metadata", "labels")
			jobSpec := child(job, "spec")
			visit(jobSpec, false, "selector", "matchLabels")
			s.pod(child(jobSpec, "template"), visit)
		}
	}
	if gvk(it, "apps", "", "StatefulSet") {
		for _, v := range elements(value(spec, "volumeClaimTemplates")) {
			visit(v, true, "metadata", "labels")
			visit(v, false, "selector", "matchLabels")
		}
	}
	if netpol {
		for _, rule := range elements(value(spec, "ingress")) {
			for _, from := range elements(value(rule, "from")) {
				visit(from, false, "podSelector", "matchLabels")
			}
		}
		for _, rule := range elements(value(spec, "egress")) {
			for _, to := range elements(value(rule, "to")) {
				visit(to, false, "podSelector", "matchLabels")
			}
		}
	}
	return n, err
}

// pod labels a pod template, and the selectors of its spec's topology
// spread constraints and pod (anti-)affinity terms. The terms are read
// from the affinity itself, not from its podAffinity or podAntiAffinity,
// exactly as the catalog does (so real affinity terms are left alone).
func (s *labelSetter) pod(pod *yaml.Node, visit func(*yaml.Node, bool, ...string)) {
	if pod == nil {
		return
	}
	visit(pod, true, "metadata", "labels")
	spec := child(pod, "spec")
	if spec == nil {
		return
	}
	for _, c := range elements(value(spec, "topologySpreadConstraints")) {
		visit(c, false, "labelSelector", "matchLabels")
	}
	aff := child(spec, "affinity")
	if aff == nil {
		return
	}
	for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
		if child(aff, kind) == nil {
			continue
		}
		for _, t := range elements(value(aff, "preferredDuringSchedulingIgnoredDuringExecution")) {
			visit(child(t, "podAffinityTerm"), false, "labelSelector", "matchLabels")
		}
		for _, t := range elements(value(aff, "requiredDuringSchedulingIgnoredDuringExecution")) {
			visit(t, false, "labelSelector", "matchLabels")
		}
	}
}

// update sets each label at path under m: an existing string value that
// differs is replaced, a missing one is created only when create is set.
func (s *labelSetter) update(m *yaml.Node, create bool, path ...string) error {
	for _, k := range s.keys {
		parent, found, err := lookupMap(m, path, create)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		v := value(parent, k)
		switch {
		case v == nil:
			if create {
				setEntry(parent, k, s.want[k])
			}
		case v.Kind != yaml.ScalarNode:
			return fmt.Errorf("%s.%s: expected a string, found %s", strings.Join(path, "."), k, v.ShortTag())
		case v.Value != s.want[k]:
			setEntry(parent, k, s.want[k])
		}
	}
	return nil
}

// lookupMap finds the map at path under m, creating the missing maps
// when create is set; found is false when it is missing.
func lookupMap(m *yaml.Node, path []string, create bool) (*yaml.Node, bool, error) {
	cur := m
	for i, p := range path {
		v := value(cur, p)
		if v == nil || fieldspec.IsNull(v) {
			if !create {
				return nil, false, nil
			}
			if v == nil {
				v = &yaml.Node{}
				cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, v)
			}
			v.Kind, v.Tag, v.Value, v.Style = yaml.MappingNode, yaml.NodeTagMap, "", 0
		}
		if v.Kind != yaml.MappingNode {
			return nil, false, errors.New(strings.Join(path[:i+1], ".") + ": expected a map, found " + v.ShortTag())
		}
		cur = v
	}
	return cur, true, nil
}

func mapNode(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// value is the value node of key in a mapping (yamlnode.Get).
func value(m *yaml.Node, key string) *yaml.Node { return yamlnode.Get(m, key) }

// child is the map value of key in m, nil when absent or not a map (the
// SDK's GetMap).
func child(m *yaml.Node, key string) *yaml.Node {
	v := value(m, key)
	if v == nil || v.Kind != yaml.MappingNode {
		return nil
	}
	return v
}

// elements are the maps of the sequence s.
func elements(s *yaml.Node) []*yaml.Node {
	if s == nil || s.Kind != yaml.SequenceNode {
		return nil
	}
	var out []*yaml.Node
	for _, e := range s.Content {
		if e.Kind == yaml.MappingNode {
			out = append(out, e)
		}
	}
	return out
}
