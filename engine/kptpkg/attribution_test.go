package kptpkg

import "testing"

func TestRecordAction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cur, group, want string }{
		{"", "pkg", "krm-pkg"},
		{"cnrm/landing-zone:networking/v0.4.0", "pkg", "cnrm/landing-zone:networking/v0.4.0,krm-pkg"},
		{"cnrm/lz/v1,krm-fn,blueprints_controller", "pkg", "cnrm/lz/v1,krm-pkg-fn,blueprints_controller"},
		{"krm-pkg", "pkg", "krm-pkg"},
		{"krm-live", "fn", "krm-fn-live"},
	} {
		if got := recordAction(tc.cur, tc.group); got != tc.want {
			t.Errorf("recordAction(%q, %q) = %q, want %q", tc.cur, tc.group, got, tc.want)
		}
	}
}
