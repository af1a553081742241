// Package fieldspec is the catalog functions' field-spec machinery:
// kustomize's default field specs (labels, annotations, images, name
// references) restated, decoding a function config's extra specs, and
// walking the fields a list of specs locates in each resource.
package fieldspec

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kustomize keeps its default field specs in an internal package, so the
// tables the catalog functions rely on are restated here. They are built by
// functions so no caller can modify a shared copy.

type spec struct {
	group, version, kind, path string
	create                     bool
}

func specs(ss ...spec) types.FsSlice {
	out := make(types.FsSlice, len(ss))
	for i, s := range ss {
		out[i] = types.FieldSpec{Gvk: resid.Gvk{Group: s.group, Version: s.version, Kind: s.kind}, Path: s.path, CreateIfNotPresent: s.create}
	}
	return out
}

// Labels are kustomize's commonLabels specs, which the set-labels
// docs point to: metadata labels, selectors and pod template labels.
func Labels() types.FsSlice {
	const podAff = "spec/template/spec/affinity/"
	fs := specs(
		spec{path: "metadata/labels", create: true},
		spec{version: "v1", kind: "Service", path: "spec/selector", create: true},
		spec{version: "v1", kind: "ReplicationController", path: "spec/selector", create: true},
		spec{version: "v1", kind: "ReplicationController", path: "spec/template/metadata/labels", create: true},
		spec{kind: "Deployment", path: "spec/selector/matchLabels", create: true},
		spec{kind: "Deployment", path: "spec/template/metadata/labels", create: true},
		spec{kind: "ReplicaSet", path: "spec/selector/matchLabels", create: true},
		spec{kind: "ReplicaSet", path: "spec/template/metadata/labels", create: true},
		spec{kind: "DaemonSet", path: "spec/selector/matchLabels", create: true},
		spec{kind: "DaemonSet", path: "spec/template/metadata/labels", create: true},
		spec{group: "apps", kind: "StatefulSet", path: "spec/selector/matchLabels", create: true},
		spec{group: "apps", kind: "StatefulSet", path: "spec/template/metadata/labels", create: true},
		spec{group: "apps", kind: "StatefulSet", path: "spec/volumeClaimTemplates[]/metadata/labels", create: true},
		spec{group: "batch", kind: "Job", path: "spec/selector/matchLabels"},
		spec{group: "batch", kind: "Job", path: "spec/template/metadata/labels", create: true},
		spec{group: "batch", kind: "CronJob", path: "spec/jobTemplate/spec/selector/matchLabels"},
		spec{group: "batch", kind: "CronJob", path: "spec/jobTemplate/metadata/labels", create: true},
		spec{group: "batch", kind: "CronJob", path: "spec/jobTemplate/spec/template/metadata/labels", create: true},
		spec{group: "policy", kind: "PodDisruptionBudget", path: "spec/selector/matchLabels"},
		spec{group: "networking.k8s.io", kind: "NetworkPolicy", path: "spec/podSelector/matchLabels"},
		spec{group: "networking.k8s.io", kind: "NetworkPolicy", path: "spec/ingress/from/podSelector/matchLabels"},
		spec{group: "networking.k8s.io", kind: "NetworkPolicy", path: "spec/egress/to/podSelector/matchLabels"},
	)
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		fs = append(fs, specs(
			spec{group: "apps", kind: kind, path: podAff + "podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels"},
			spec{group: "apps", kind: kind, path: podAff + "podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels"},
			spec{group: "apps", kind: kind, path: podAff + "podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels"},
			spec{group: "apps", kind: kind, path: podAff + "podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels"},
			spec{group: "apps", kind: kind, path: "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels"},
		)...)
	}
	return fs
}

// Annotations are kustomize's commonAnnotations specs: metadata and
// every embedded ObjectMeta of the built-in workload kinds.
func Annotations() types.FsSlice {
	return specs(
		spec{path: "metadata/annotations", create: true},
		spec{version: "v1", kind: "ReplicationController", path: "spec/template/metadata/annotations", create: true},
		spec{kind: "Deployment", path: "spec/template/metadata/annotations", create: true},
		spec{kind: "ReplicaSet", path: "spec/template/metadata/annotations", create: true},
		spec{kind: "DaemonSet", path: "spec/template/metadata/annotations", create: true},
		spec{kind: "StatefulSet", path: "spec/template/metadata/annotations", create: true},
		spec{group: "batch", kind: "Job", path: "spec/template/metadata/annotations", create: true},
		spec{group: "batch", kind: "CronJob", path: "spec/jobTemplate/metadata/annotations", create: true},
		spec{group: "batch", kind: "CronJob", path: "spec/jobTemplate/spec/template/metadata/annotations", create: true},
	)
}

// Images are the current set-image's: the containers and init
// containers of a v1 Pod and of an apps/v1 Deployment, StatefulSet,
// ReplicaSet or DaemonSet pod template (no Job, CronJob,
// ReplicationController or PodTemplate).
func Images() types.FsSlice {
	fs := specs(
		spec{version: "v1", kind: "Pod", path: "spec/containers[]/image"},
		spec{version: "v1", kind: "Pod", path: "spec/initContainers[]/image"},
	)
	for _, kind := range []string{"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"} {
		fs = append(fs, specs(
			spec{group: "apps", version: "v1", kind: kind, path: "spec/template/spec/containers[]/image"},
			spec{group: "apps", version: "v1", kind: kind, path: "spec/template/spec/initContainers[]/image"},
		)...)
	}
	return fs
}

// podSpecPaths maps each built-in workload kind to where its PodSpec lives.
func podSpecPaths() []spec {
	return []spec{
		{version: "v1", kind: "Pod", path: "spec"},
		{kind: "PodTemplate", path: "template/spec"},
		{kind: "ReplicationController", path: "spec/template/spec"},
		{kind: "Deployment", path: "spec/template/spec"},
		{kind: "ReplicaSet", path: "spec/template/spec"},
		{kind: "DaemonSet", path: "spec/template/spec"},
		{kind: "StatefulSet", path: "spec/template/spec"},
		{kind: "Job", path: "spec/template/spec"},
		{kind: "CronJob", path: "spec/jobTemplate/spec/template/spec"},
	}
}

// NameReference says which fields of which kinds hold the name of a
// resource of kind Target; kustomize's nameReference table in another shape.
type NameReference struct {
	Target    resid.Gvk
	Referrers types.FsSlice
}

// NameReferences restates kustomize's default nameReference configuration:
// when a resource is renamed, these fields in other resources follow it.
func NameReferences() []NameReference {
	inPodSpecs := func(subpaths ...string) types.FsSlice {
		var fs types.FsSlice
		for _, w := range podSpecPaths() {
			for _, sp := range subpaths {
				fs = append(fs, specs(spec{group: w.group, version: w.version, kind: w.kind, path: w.path + "/" + sp})...)
			}
		}
		return fs
	}
	join := func(parts ...types.FsSlice) types.FsSlice {
		var out types.FsSlice
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	hpa := specs(spec{kind: "HorizontalPodAutoscaler", path: "spec/scaleTargetRef/name"})
	roleRules := specs(spec{kind: "Role", path: "rules/resourceNames"}, spec{kind: "ClusterRole", path: "rules/resourceNames"})
	return []NameReference{
		{Target: resid.Gvk{Kind: "Deployment"}, Referrers: hpa},
		{Target: resid.Gvk{Kind: "ReplicationController"}, Referrers: hpa},
		{Target: resid.Gvk{Kind: "ReplicaSet"}, Referrers: hpa},
		{Target: resid.Gvk{Kind: "StatefulSet"}, Referrers: hpa},
		{Target: resid.Gvk{Version: "v1", Kind: "ConfigMap"}, Referrers: join(
			inPodSpecs(
				"volumes/configMap/name",
				"containers/env/valueFrom/configMapKeyRef/name",
				"initContainers/env/valueFrom/configMapKeyRef/name",
				"containers/envFrom/configMapRef/name",
				"initContainers/envFrom/configMapRef/name",
				"volumes/projected/sources/configMap/name",
			),
			specs(
				spec{kind: "Node", path: "spec/configSource/configMap"},
				spec{kind: "Ingress", path: `metadata/annotations/nginx.ingress.kubernetes.io\/fastcgi-params-configmap`},
			),
			roleRules,
		)},
		{Target: resid.Gvk{Version: "v1", Kind: "Secret"}, Referrers: join(
			inPodSpecs(
				"volumes/secret/secretName",
				"containers/env/valueFrom/secretKeyRef/name",
				"initContainers/env/valueFrom/secretKeyRef/name",
				"containers/envFrom/secretRef/name",
				"initContainers/envFrom/secretRef/name",
				"imagePullSecrets/name",
				"volumes/projected/sources/secret/name",
			),
			specs(
				spec{kind: "Ingress", path: "spec/tls/secretName"},
				spec{kind: "Ingress", path: `metadata/annotations/ingress.kubernetes.io\/auth-secret`},
				spec{kind: "Ingress", path: `metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret`},
				spec{kind: "Ingress", path: `metadata/annotations/nginx.ingress.kubernetes.io\/auth-tls-secret`},
				spec{kind: "ServiceAccount", path: "imagePullSecrets/name"},
				spec{kind: "StorageClass", path: "parameters/secretName"},
				spec{kind: "StorageClass", path: "parameters/adminSecretName"},
				spec{kind: "StorageClass", path: "parameters/userSecretName"},
				spec{kind: "StorageClass", path: "parameters/secretRef"},
				spec{kind: "PersistentVolume", path: "spec/azureFile/secretName"},
			),
			roleRules,
		)},
		{Target: resid.Gvk{Version: "v1", Kind: "Service"}, Referrers: specs(
			spec{group: "apps", kind: "StatefulSet", path: "spec/serviceName"},
			spec{kind: "Ingress", path: "spec/rules/http/paths/backend/serviceName"},
			spec{kind: "Ingress", path: "spec/backend/serviceName"},
			spec{kind: "Ingress", path: "spec/rules/http/paths/backend/service/name"},
			spec{kind: "Ingress", path: "spec/defaultBackend/service/name"},
			spec{group: "apiregistration.k8s.io", kind: "APIService", path: "spec/service/name"},
			spec{group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration", path: "webhooks/clientConfig/service"},
			spec{group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration", path: "webhooks/clientConfig/service"},
		)},
		{Target: resid.Gvk{Group: "rbac.authorization.k8s.io", Kind: "Role"}, Referrers: specs(
			spec{group: "rbac.authorization.k8s.io", kind: "RoleBinding", path: "roleRef/name"},
		)},
		{Target: resid.Gvk{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, Referrers: specs(
			spec{group: "rbac.authorization.k8s.io", kind: "RoleBinding", path: "roleRef/name"},
			spec{group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding", path: "roleRef/name"},
		)},
		{Target: resid.Gvk{Version: "v1", Kind: "ServiceAccount"}, Referrers: join(
			specs(
				spec{group: "rbac.authorization.k8s.io", kind: "RoleBinding", path: "subjects"},
				spec{group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding", path: "subjects"},
			),
			inPodSpecs("serviceAccountName"),
		)},
		{Target: resid.Gvk{Version: "v1", Kind: "PersistentVolumeClaim"}, Referrers: inPodSpecs("volumes/persistentVolumeClaim/claimName")},
		{Target: resid.Gvk{Version: "v1", Kind: "PersistentVolume"}, Referrers: join(
			specs(spec{kind: "PersistentVolumeClaim", path: "spec/volumeName"}),
			specs(spec{kind: "ClusterRole", path: "rules/resourceNames"}),
		)},
		{Target: resid.Gvk{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}, Referrers: specs(
			spec{kind: "PersistentVolume", path: "spec/storageClassName"},
			spec{kind: "PersistentVolumeClaim", path: "spec/storageClassName"},
			spec{kind: "StatefulSet", path: "spec/volumeClaimTemplates/spec/storageClassName"},
		)},
		{Target: resid.Gvk{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}, Referrers: inPodSpecs("priorityClassName")},
		{Target: resid.Gvk{Group: "networking.k8s.io", Kind: "IngressClass"}, Referrers: specs(
			spec{kind: "Ingress", path: "spec/ingressClassName"},
		)},
	}
}

// Decode reads a list of field specs (additionalLabelFields and the
// like) from a functionConfig field.
func Decode(n *yaml.RNode, field string) (types.FsSlice, error) {
	f := n.Field(field)
	if f == nil || yaml.IsMissingOrNull(f.Value) {
		return nil, nil
	}
	var fs types.FsSlice
	if err := f.Value.YNode().Decode(&fs); err != nil {
		return nil, fmt.Errorf("functionConfig: %s: %w", field, err)
	}
	for i, s := range fs {
		if s.Path == "" {
			return nil, fmt.Errorf("functionConfig: %s[%d]: path is required", field, i)
		}
	}
	return fs, nil
}

// walkFieldSpec calls set on every node the field spec path leads to in n,
// following kustomize's fieldspec semantics: "/"-separated keys ("\/"
// escapes a slash), any list met on the way is entered element by element
// (a "[]" suffix just documents that), and with create the missing maps on
// the way, and the last field as a createKind node, are added. It walks the
// yaml nodes directly; kustomize's filter re-splits the path and re-reads
// the resource type for every resource and spec, which dominated set-labels.
func walkFieldSpec(n *yaml.Node, path []string, create bool, createKind yaml.Kind, set func(*yaml.Node) error) error {
	if n.Kind == yaml.SequenceNode {
		for _, e := range n.Content {
			if err := walkFieldSpec(e, path, create, createKind, set); err != nil {
				return err
			}
		}
		return nil
	}
	if len(path) == 0 {
		return set(n)
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	key, isSeq := strings.CutSuffix(path[0], "[]")
	// like kustomize, never create a list, nor anything without a kind to create
	canCreate := create && createKind != 0 && !isSeq
	var child *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			child = n.Content[i+1]
			break
		}
	}
	kind := yaml.MappingNode
	if len(path) == 1 {
		kind = createKind
	}
	switch {
	case child == nil && !canCreate:
		return nil
	case child == nil:
		child = &yaml.Node{Kind: kind}
		if kind == yaml.MappingNode {
			child.Tag = yaml.NodeTagMap
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, child)
	case canCreate && IsNull(child) && kind == yaml.MappingNode:
		child.Kind, child.Tag, child.Value, child.Style = yaml.MappingNode, yaml.NodeTagMap, "", 0
	}
	return walkFieldSpec(child, path[1:], create, createKind, set)
}

// IsNull says whether n is a YAML null ("", "~", "null" or tagged !!null),
// which a field spec may turn into the map it was meant to be.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Tag == yaml.NodeTagNull || ((n.Tag == "" || n.Tag == "!") && (n.Value == "" || n.Value == "~" || n.Value == "null")))
}

// splitSpecPath splits a field spec path on "/", honouring "\/" escapes.
func splitSpecPath(p string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p) && p[i+1] == '/':
			cur.WriteByte('/')
			i++
		case p[i] == '/':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(p[i])
		}
	}
	return append(out, cur.String())
}

// Apply runs set on every field that the specs applying to each
// item's type locate; skip excludes items.
func Apply(items []*yaml.RNode, all types.FsSlice, createKind yaml.Kind, skip func(*yaml.RNode) bool, set func(*yaml.Node) error) error {
	return ApplyAt(items, all, createKind, skip, func(_ *yaml.RNode, _ []string, n *yaml.Node) error { return set(n) })
}

// ApplyAt is Apply telling set which item and which
// field spec path (split on "/") located the field.
func ApplyAt(items []*yaml.RNode, all types.FsSlice, createKind yaml.Kind, skip func(*yaml.RNode) bool, set func(it *yaml.RNode, path []string, n *yaml.Node) error) error {
	type compiled struct {
		path   []string
		create bool
	}
	byType := map[resid.Gvk][]compiled{}
	for _, it := range items {
		if skip != nil && skip(it) {
			continue
		}
		gvk := resid.GvkFromNode(it)
		specs, ok := byType[gvk]
		if !ok {
			for _, f := range all {
				if gvk.IsSelected(&f.Gvk) {
					specs = append(specs, compiled{splitSpecPath(f.Path), f.CreateIfNotPresent})
				}
			}
			byType[gvk] = specs
		}
		for _, s := range specs {
			at := func(n *yaml.Node) error { return set(it, s.path, n) }
			if err := walkFieldSpec(it.YNode(), s.path, s.create, createKind, at); err != nil {
				return fmt.Errorf("%s %s: %w", it.GetKind(), it.GetName(), err)
			}
		}
	}
	return nil
}
