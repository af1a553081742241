package forge

import (
	"strings"
	"testing"
)

func TestCheckReportValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		r       CheckReport
		wantErr string
	}{
		{"completed", CheckReport{Name: "render", HeadSHA: "abc", Status: CheckCompleted, Conclusion: CheckFailure}, ""},
		{"running", CheckReport{Name: "render", HeadSHA: "abc", Status: CheckInProgress}, ""},
		{"no name", CheckReport{HeadSHA: "abc", Status: CheckQueued}, "name and headSHA are required"},
		{"completed without conclusion", CheckReport{Name: "render", HeadSHA: "abc", Status: CheckCompleted}, "needs a conclusion"},
		{"conclusion too early", CheckReport{Name: "render", HeadSHA: "abc", Status: CheckQueued, Conclusion: CheckSuccess}, "want status completed"},
		{"unknown status", CheckReport{Name: "render", HeadSHA: "abc", Status: "done"}, `status "done"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.r.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}
