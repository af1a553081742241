package packaging

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsyaml "sigs.k8s.io/yaml"
)

const deployDir = "../../deploy"

// rendered is the deploy package after `kptbot fn render`, decoded.
type rendered struct {
	files       kptpkg.Tree
	namespace   *corev1.Namespace
	sa          *corev1.ServiceAccount
	configMap   *corev1.ConfigMap
	deployment  *appsv1.Deployment
	service     *corev1.Service
	pdb         *policyv1.PodDisruptionBudget
	monitor     *serviceMonitor
	namespaceOf map[string]string // kind/name -> metadata.namespace
}

// serviceMonitor is the Prometheus Operator's ServiceMonitor, the fields
// kptbot uses; decoded strictly, so a misspelled field fails.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// renderDeploy copies deploy/ to a temporary directory, lets edit change
// the copy, renders it with the engine (as `kptbot fn render` does) and
// decodes every manifest with the Kubernetes API types, strictly.
func renderDeploy(t *testing.T, edit func(kptpkg.Tree)) (*rendered, *render.RenderResult) {
	t.Helper()
	tree, err := kptpkg.ReadTree(deployDir)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(tree)
	}
	dir := filepath.Join(t.TempDir(), "deploy")
	if err := tree.Write(dir); err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(context.Background(), dir, render.RenderOptions{})
	if err != nil {
		t.Fatalf("kptbot fn render deploy: %v", err)
	}
	out, err := kptpkg.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &rendered{files: out, namespaceOf: map[string]string{}}
	for _, p := range out.Paths() {
		if !strings.HasPrefix(p, "manifests/") {
			continue
		}
		if path.Ext(p) != ".yaml" {
			t.Errorf("%s: kubectl apply -f deploy/manifests reads only .yaml here", p)
		}
		for i, doc := range bytes.Split(out[p], []byte("\n---\n")) {
			r.decode(t, fmt.Sprintf("%s#%d", p, i), doc)
		}
	}
	return r, res
}

func (r *rendered) decode(t *testing.T, where string, doc []byte) {
	t.Helper()
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := sigsyaml.Unmarshal(doc, &meta); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	strict := func(into any) {
		if err := sigsyaml.UnmarshalStrict(doc, into); err != nil {
			t.Errorf("%s: %s %s is not a valid %s: %v", where, meta.Kind, meta.Metadata.Name, meta.APIVersion, err)
		}
	}
	r.namespaceOf[meta.Kind+"/"+meta.Metadata.Name] = meta.Metadata.Namespace
	switch gvk := meta.APIVersion + "/" + meta.Kind; gvk {
	case "v1/Namespace":
		r.namespace = &corev1.Namespace{}
		strict(r.namespace)
	case "v1/ServiceAccount":
		r.sa = &corev1.ServiceAccount{}
		strict(r.sa)
	case "v1/ConfigMap":
		r.configMap = &corev1.ConfigMap{}
		strict(r.configMap)
	case "apps/v1/Deployment":
		r.deployment = &appsv1.Deployment{}
		strict(r.deployment)
	case "v1/Service":
		r.service = &corev1.Service{}
		strict(r.service)
	case "policy/v1/PodDisruptionBudget":
		r.pdb = &policyv1.PodDisruptionBudget{}
		strict(r.pdb)
	case "monitoring.coreos.com/v1/ServiceMonitor":
		r.monitor = &serviceMonitor{}
		strict(r.monitor)
	case "v1/Secret":
		t.Errorf("%s: the package holds a Secret: it must only reference Secrets the user creates", where)
	default:
		t.Errorf("%s: unexpected kind %s", where, gvk)
	}
}

// TestDeployPackage renders deploy/ and checks every object: valid for the
// Kubernetes API, and what the server needs (config, secrets by reference,
// probes on the server's routes, limits, a non-root security context, a
// Service and ServiceMonitor that select the pods).
func TestDeployPackage(t *testing.T) {
	t.Parallel()
	r, res := renderDeploy(t, nil)
	if n := len(res.Added) + len(res.Removed) + len(res.Modified); n > 1 {
		// The Kptfile's Rendered condition may be all that changes.
		t.Errorf("deploy/ is not committed rendered: rendering changed %v %v %v; run `kptbot fn render deploy`", res.Added, res.Removed, res.Modified)
	}
	for name, obj := range map[string]any{"Namespace": r.namespace, "ServiceAccount": r.sa, "ConfigMap": r.configMap,
		"Deployment": r.deployment, "Service": r.service, "PodDisruptionBudget": r.pdb, "ServiceMonitor": r.monitor} {
		if obj == nil || fmt.Sprint(obj) == "<nil>" {
			t.Fatalf("deploy/manifests has no %s", name)
		}
	}
	d := r.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("Deployment replicas %d, want 2", ptrValue(d.Spec.Replicas))
	}
	sel, err := metav1LabelSelector(d.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Deployment's selector %v does not select its pods %v", d.Spec.Selector, d.Spec.Template.Labels)
	}
	pod := d.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot ||
		pod.SecurityContext.RunAsUser == nil || *pod.SecurityContext.RunAsUser == 0 {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and a non-zero runAsUser", pod.SecurityContext)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token: kptbot never calls the Kubernetes API")
	}
	if pod.ServiceAccountName != r.sa.Name {
		t.Errorf("serviceAccountName %q, the package's ServiceAccount is %q", pod.ServiceAccountName, r.sa.Name)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if got := strings.Join(c.Args, " "); got != "serve --config /etc/kptbot/config.yaml" {
		t.Errorf("args %q", got)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for probe, want := range map[*corev1.Probe]string{c.ReadinessProbe: "/readyz", c.LivenessProbe: "/healthz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want {
			t.Errorf("probe %+v: want an HTTP GET of %s", probe, want)
			continue
		}
		if _, ok := ports[probe.HTTPGet.Port.String()]; !ok {
			t.Errorf("the %s probe uses port %s, which the container does not name", want, probe.HTTPGet.Port.String())
		}
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Limits[res]; !ok {
			t.Errorf("no %s limit", res)
		}
		if _, ok := c.Resources.Requests[res]; !ok {
			t.Errorf("no %s request", res)
		}
	}
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil ||
		!*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container securityContext %+v: want no privilege escalation, a read-only root and all capabilities dropped", sc)
	}
	checkConfig(t, r, c, pod)

	svc := r.service
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("the Service's selector %v does not select the pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	svcPorts := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		svcPorts[p.Name] = true
		if _, ok := ports[p.TargetPort.String()]; !ok {
			t.Errorf("Service port %s targets %s, which the container does not name", p.Name, p.TargetPort.String())
		}
	}
	m := r.monitor
	if m.Metadata.Namespace != svc.Namespace {
		t.Errorf("the ServiceMonitor is in %q, the Service in %q", m.Metadata.Namespace, svc.Namespace)
	}
	if len(m.Spec.Selector.MatchLabels) == 0 || !labels.SelectorFromSet(m.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
		t.Errorf("the ServiceMonitor's selector %v does not select the Service %v", m.Spec.Selector.MatchLabels, svc.Labels)
	}
	if len(m.Spec.Endpoints) == 0 {
		t.Error("the ServiceMonitor has no endpoints")
	}
	for _, e := range m.Spec.Endpoints {
		if !svcPorts[e.Port] || e.Path != "/metrics" {
			t.Errorf("ServiceMonitor endpoint %+v: want a Service port name and /metrics", e)
		}
	}
	pdbSel, err := metav1LabelSelector(r.pdb.Spec.Selector)
	if err != nil || !pdbSel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the PodDisruptionBudget does not select the pods")
	}
}

// checkConfig parses the ConfigMap's server configuration with the
// server's own parser and checks it against the pod: the listen port is
// the container's, the config file is mounted where --config points, and
// every secret file lies in a mounted Secret volume.
func checkConfig(t *testing.T, r *rendered, c corev1.Container, pod corev1.PodSpec) {
	t.Helper()
	raw, ok := r.configMap.Data["config.yaml"]
	if !ok {
		t.Fatal("the ConfigMap has no config.yaml")
	}
	cfg, err := config.ParseServer("deploy ConfigMap config.yaml", []byte(raw))
	if err != nil {
		t.Fatalf("the server configuration does not parse: %v", err)
	}
	if want := fmt.Sprintf(":%d", c.Ports[0].ContainerPort); cfg.Listen != want {
		t.Errorf("listen %q, the container port is %s", cfg.Listen, want)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	configMounted, secretDirs := false, map[string]string{}
	for _, m := range c.VolumeMounts {
		v := volumes[m.Name]
		switch {
		case m.MountPath == "/etc/kptbot/config.yaml":
			configMounted = v.ConfigMap != nil && v.ConfigMap.Name == r.configMap.Name && m.SubPath == "config.yaml"
		case v.Secret != nil:
			if v.Secret.DefaultMode == nil || *v.Secret.DefaultMode&0o007 != 0 {
				t.Errorf("secret volume %s: defaultMode %v lets other users read it", m.Name, v.Secret.DefaultMode)
			}
			if !m.ReadOnly {
				t.Errorf("secret volume %s is mounted writable", m.Name)
			}
			secretDirs[m.MountPath] = v.Secret.SecretName
		}
	}
	if !configMounted {
		t.Error("config.yaml of the ConfigMap is not mounted at /etc/kptbot/config.yaml")
	}
	var files []string
	if g := cfg.GitHub; g != nil {
		files = append(files, g.PrivateKeyFile, g.TokenFile, g.WebhookSecretFile)
	}
	if g := cfg.GitLab; g != nil {
		files = append(files, g.TokenFile, g.WebhookSecretFile)
	}
	for _, f := range files {
		if f != "" && secretDirs[path.Dir(f)] == "" {
			t.Errorf("secret file %s is in no mounted Secret (%v)", f, secretDirs)
		}
	}
	for _, s := range []string{"BEGIN RSA PRIVATE KEY", "BEGIN PRIVATE KEY", "ghp_", "ghs_", "glpat-"} {
		for p, b := range r.files {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds what looks like a secret (%q)", p, s)
			}
		}
	}
}

// TestDeployNamespaceFollowsKptfile changes the namespace in the Kptfile's
// set-namespace step and renders: every namespaced object, and the
// Namespace itself, must follow (so users change it in one place).
func TestDeployNamespaceFollowsKptfile(t *testing.T) {
	t.Parallel()
	r, _ := renderDeploy(t, func(tree kptpkg.Tree) {
		k := string(tree["Kptfile"])
		if !strings.Contains(k, "namespace: kptbot\n") {
			t.Fatal("the Kptfile's set-namespace step does not set kptbot")
		}
		tree["Kptfile"] = []byte(strings.Replace(k, "namespace: kptbot\n", "namespace: bots\n", 1))
	})
	if r.namespace == nil || r.namespace.Name != "bots" {
		t.Errorf("Namespace %v, want bots", r.namespace)
	}
	for obj, ns := range r.namespaceOf {
		if !strings.HasPrefix(obj, "Namespace/") && ns != "bots" {
			t.Errorf("%s is in namespace %q after set-namespace bots", obj, ns)
		}
	}
	if r.deployment.Labels["app.kubernetes.io/part-of"] != "kptbot" {
		t.Errorf("set-labels did not label the Deployment: %v", r.deployment.Labels)
	}
}

func TestDeployIgnoresAppManifest(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(deployDir, ".krmignore"))
	if err != nil || !slices.Contains(strings.Fields(string(b)), "github-app.yaml") {
		t.Fatalf(".krmignore must list github-app.yaml (not a Kubernetes object): %v %q", err, b)
	}
}

// TestDeployImageFollowsKptfile sets the Kptfile's image setter and
// renders: the Deployment must run that image, so a user who builds and
// pushes their own image changes one line.
func TestDeployImageFollowsKptfile(t *testing.T) {
	t.Parallel()
	const want = "registry.example.com/platform/kptbot:v0.3.1"
	r, _ := renderDeploy(t, func(tree kptpkg.Tree) {
		k := string(tree["Kptfile"])
		if !strings.Contains(k, "image: kptbot:dev\n") {
			t.Fatal("the Kptfile's apply-setters step does not set image: kptbot:dev")
		}
		tree["Kptfile"] = []byte(strings.Replace(k, "image: kptbot:dev\n", "image: "+want+"\n", 1))
	})
	if got := r.deployment.Spec.Template.Spec.Containers[0].Image; got != want {
		t.Errorf("Deployment image %q after the setter was set to %q", got, want)
	}
}
