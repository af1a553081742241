package packaging

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// metav1LabelSelector converts a LabelSelector as the API server does.
func metav1LabelSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}

func ptrValue[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
