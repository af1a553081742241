package builtins

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func genRL(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: app-%d
    namespace: old # kpt-set: ${namespace}
    labels:
      app: app-%d
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'app-%d.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'app-%d.yaml'
  spec:
    replicas: 3 # kpt-set: ${replicas}
    selector:
      matchLabels:
        app: app-%d
    template:
      metadata:
        labels:
          app: app-%d
      spec:
        containers:
        - name: nginx
          image: nginx:1.14.2 # kpt-set: ${image}
          ports:
          - containerPort: 80
          resources:
            limits:
              cpu: 500m
              memory: 128Mi
`, i, i, i, i, i, i)
		case 1:
			fmt.Fprintf(&b, `- apiVersion: v1
  kind: Service
  metadata:
    name: svc-%d
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'svc-%d.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'svc-%d.yaml'
  spec:
    selector:
      app: app-%d
    ports:
    - port: 80
      targetPort: 8080
`, i, i, i, i)
		default:
			fmt.Fprintf(&b, `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm-%d
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'cm-%d.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'cm-%d.yaml'
  data:
    # a comment
    key: value-%d
    other: "quoted"
`, i, i, i, i)
		}
	}
	b.WriteString("functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n  data:\n    namespace: new\n")
	return []byte(b.String())
}

func BenchmarkScratchParse(b *testing.B) {
	in := genRL(1000)
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		var n yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(&n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScratchEncode(b *testing.B) {
	in := genRL(1000)
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(&n); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		e := yaml.NewEncoder(&buf)
		if err := e.Encode(&n); err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

func BenchmarkScratchEncodeItems(b *testing.B) {
	in := genRL(1000)
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(&n); err != nil {
		b.Fatal(err)
	}
	items := n.Content[0].Content[5].Content
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		var out bytes.Buffer
		for _, it := range items {
			doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.SequenceNode, Content: []*yaml.Node{it}}}}
			e := yaml.NewEncoder(&out)
			if err := e.Encode(doc); err != nil {
				b.Fatal(err)
			}
			e.Close()
		}
	}
}

func BenchmarkScratchParseItems(b *testing.B) {
	in := genRL(1000)
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(&n); err != nil {
		b.Fatal(err)
	}
	items := n.Content[0].Content[5].Content
	var chunks [][]byte
	for _, it := range items {
		var out bytes.Buffer
		doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.SequenceNode, Content: []*yaml.Node{it}}}}
		e := yaml.NewEncoder(&out)
		e.Encode(doc)
		e.Close()
		chunks = append(chunks, out.Bytes())
	}
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range chunks {
			var n yaml.Node
			if err := yaml.Unmarshal(c, &n); err != nil {
				b.Fatal(err)
			}
		}
	}
}
