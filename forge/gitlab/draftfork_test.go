package gitlab

import "testing"

func TestIsFork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		source, target int64
		want           bool
	}{
		{"same project", 42, 42, false},
		{"another project", 7, 42, true},
		{"source missing", 0, 42, true},
		{"target missing", 42, 0, true},
		{"both missing", 0, 0, true},
		{"negative ids are no project", -1, -1, true},
	} {
		if got := IsFork(tc.source, tc.target); got != tc.want {
			t.Errorf("%s: IsFork(%d, %d) = %v, want %v", tc.name, tc.source, tc.target, got, tc.want)
		}
	}
}

func TestProjectID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"42", 42},
		{"", 0},
		{"042", 0},
		{"+42", 0},
		{" 42", 0},
		{"-42", 0},
		{"0", 0},
		{"42abc", 0},
		{"99999999999999999999", 0},
	} {
		if got := ProjectID(tc.in); got != tc.want {
			t.Errorf("ProjectID(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestIsDraftTitle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		title string
		want  bool
	}{
		{"Draft: update", true},
		{"draft:update", true},
		{"[Draft] update", true},
		{"(DRAFT) update", true},
		{"WIP: update", false},
		{"Update the draft", false},
		{"Draf", false},
		{"", false},
	} {
		if got := IsDraftTitle(tc.title); got != tc.want {
			t.Errorf("IsDraftTitle(%q) = %v, want %v", tc.title, got, tc.want)
		}
	}
}
