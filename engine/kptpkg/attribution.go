package kptpkg

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kpt attributes Config Connector resources to the command group that
// wrote them (pkg get adds "krm-pkg") in the cnrm.cloud.google.com/blueprint
// annotation; KRM_DISABLE_ATTRIBUTION turns it off, as in kpt.
const (
	// CNRMBlueprintAnnotation records which kpt command groups wrote a
	// Config Connector resource.
	CNRMBlueprintAnnotation = "cnrm.cloud.google.com/blueprint"
	disableAttributionEnv   = "KRM_DISABLE_ATTRIBUTION"
)

// Attribute adds kpt's attribution for cmdGroup ("pkg" for pkg get, "fn"
// for a render) to a Config Connector resource (an apiVersion with
// ".cnrm."); other resources are untouched.
func Attribute(n *yaml.RNode, cmdGroup string) error {
	if os.Getenv(disableAttributionEnv) != "" || !strings.Contains(n.GetApiVersion(), ".cnrm.") {
		return nil
	}
	if n.Field(yaml.MetadataField).IsNilOrEmpty() {
		return nil
	}
	cur := n.GetAnnotations()[CNRMBlueprintAnnotation]
	return n.PipeE(yaml.SetAnnotation(CNRMBlueprintAnnotation, recordAction(cur, cmdGroup)))
}

// recordAction is kpt's: the krm-<group> part of the annotation gains
// cmdGroup, in kpt's order (pkg, fn, live); other parts stay.
func recordAction(cur, cmdGroup string) string {
	if cur == "" {
		return "krm-" + cmdGroup
	}
	if !strings.Contains(cur, "krm-") {
		return fmt.Sprintf("%s,krm-%s", cur, cmdGroup)
	}
	parts := strings.Split(cur, ",")
	for i, p := range parts {
		if !strings.Contains(p, "krm") {
			continue
		}
		krm := []string{"krm"}
		for _, g := range []string{"pkg", "fn", "live"} {
			if strings.Contains(p, g) || cmdGroup == g {
				krm = append(krm, g)
			}
		}
		parts[i] = strings.Join(krm, "-")
	}
	return strings.Join(parts, ",")
}
