package enginetest

import (
	"fmt"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// SmallPackage is a typical small kpt package: seven resources, comments
// where people write them (file headers, beside scalar fields), and a
// catalog pipeline of set-namespace, apply-replacements and starlark. %s
// are the three functions' references (image: or exec:). The CLI
// benchmark renders it as a whole process, the built-ins' benchmark runs
// its pipeline in process.
func SmallPackage(setNamespace, applyReplacements, starlark string) kptpkg.Tree {
	return kptpkg.Tree{
		kptpkg.KptfileName: []byte(fmt.Sprintf(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
info:
  description: a small web application
pipeline:
  mutators:
    - %s
      configMap:
        namespace: shop
    - %s
      configPath: replacements.yaml
    - %s
      configPath: tier.yaml
`, setNamespace, applyReplacements, starlark)),
		"replacements.yaml": []byte(`apiVersion: fn.kpt.dev/v1alpha1
kind: ApplyReplacements
metadata:
  name: image
  annotations:
    config.kubernetes.io/local-config: "true"
replacements:
  - source:
      kind: ConfigMap
      name: app-config
      fieldPath: data.image
    targets:
      - select:
          kind: Deployment
        fieldPaths:
          - spec.template.spec.containers.[name=app].image
`),
		"tier.yaml": []byte(`apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: tier
  annotations:
    config.kubernetes.io/local-config: "true"
source: |
  for r in ctx.resource_list["items"]:
    r["metadata"].setdefault("labels", {})["tier"] = "web"
`),
		"configmap.yaml": []byte(`# Settings the deployment reads.
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config # referenced by the replacement
data:
  image: registry.example.com/shop/app:1.4.2
  LOG_LEVEL: info
`),
		"deployment.yaml": []byte(`# The application.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels:
    app: shop
spec:
  replicas: 3 # three for availability
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      serviceAccountName: app
      containers:
        - name: app
          image: app:latest
          ports:
            - containerPort: 8080
          envFrom:
            - configMapRef:
                name: app-config
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
`),
		"service.yaml": []byte(`apiVersion: v1
kind: Service
metadata:
  name: app
spec:
  selector:
    app: shop
  ports:
    - port: 80
      targetPort: 8080
`),
		"serviceaccount.yaml": []byte(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: app
`),
		"hpa.yaml": []byte(`apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: app
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: app
  minReplicas: 3
  maxReplicas: 10
`),
		"pdb.yaml": []byte(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: app
spec:
  minAvailable: 2
  selector:
    matchLabels:
      app: shop
`),
	}
}
