package porch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseTrailer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		msg     string
		want    Trailer
		found   bool
		errLike string
	}{
		{"Porch's approve commit",
			"Approving package revision blueprint/bp2/2\n\nkpt:{\"package\":\"blueprint/bp2\",\"workspaceName\":\"v2\",\"revision\":\"v2\"}\n",
			Trailer{Package: "blueprint/bp2", WorkspaceName: "v2", Revision: "v2"}, true, ""},
		{"older Porch: at the end of the subject",
			"Intermediate commit kpt:{\"package\":\"pkg-with-history\",\"revision\":\"v1\",\"task\":{\"type\":\"init\",\"init\":{\"description\":\"sample description\"}}}",
			Trailer{Package: "pkg-with-history", Revision: "v1", Task: json.RawMessage(`{"type":"init","init":{"description":"sample description"}}`)}, true, ""},
		{"the last trailer wins",
			"x\n\nkpt:{\"package\":\"a\"}\nkpt:{\"package\":\"b\"}\n", Trailer{Package: "b"}, true, ""},
		{"none", "fix typo\n\nSigned-off-by: someone\n", Trailer{}, false, ""},
		{"Porch's invalid annotation", "x\n\nkpt:{invalid:annotation}\n", Trailer{}, true, "malformed kpt trailer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := ParseTrailer(tc.msg)
			if found != tc.found || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseTrailer = %+v, %v; want %+v, %v", got, found, tc.want, tc.found)
			}
			if (err == nil) != (tc.errLike == "") || (err != nil && !strings.Contains(err.Error(), tc.errLike)) {
				t.Errorf("err = %v, want %q", err, tc.errLike)
			}
		})
	}
}

// TestFormatTrailer: the line is Porch's gitAnnotation JSON, fields in
// Porch's order, empty ones left out.
func TestFormatTrailer(t *testing.T) {
	for _, tc := range []struct {
		in   Trailer
		want string
	}{
		{Trailer{Package: "teams/ns", WorkspaceName: "edit-2", Revision: RevisionName(2)}, `kpt:{"package":"teams/ns","workspaceName":"edit-2","revision":"v2"}`},
		{Trailer{Package: "a", WorkspaceName: UpdateWorkspace, Task: VariantEditTask("team-a").JSON()},
			`kpt:{"package":"a","workspaceName":"kptbot-update","task":{"type":"edit","edit":{"packageVariant":"team-a"}}}`},
	} {
		got, err := FormatTrailer(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("FormatTrailer = %s, %v; want %s", got, err, tc.want)
		}
	}
	if _, err := FormatTrailer(Trailer{Package: "a", Task: json.RawMessage(`{bad`)}); err == nil || !strings.Contains(err.Error(), "kpt trailer of a") {
		t.Errorf("a task that is not JSON: %v", err)
	}
}

func TestTaskTrailer(t *testing.T) {
	got := TaskTrailer("a/b", "", RevisionName(3), TypeTask(TaskTypeDelete))
	if want := `kpt:{"package":"a/b","revision":"v3","task":{"type":"delete"}}`; got != want {
		t.Errorf("TaskTrailer = %s, want %s", got, want)
	}
}

func TestParsedTask(t *testing.T) {
	tr := Trailer{Package: "a", Task: UpgradeTask("o", "n", "l", "").JSON()}
	task, ok, err := tr.ParsedTask()
	if err != nil || !ok || task.Type != TaskTypeUpgrade || task.Upgrade.NewUpstream.Name != "n" {
		t.Errorf("ParsedTask = %+v, %v, %v", task, ok, err)
	}
	for _, raw := range []string{"", "null"} {
		if _, ok, err := (Trailer{Task: json.RawMessage(raw)}).ParsedTask(); ok || err != nil {
			t.Errorf("task %q: ok %v, err %v", raw, ok, err)
		}
	}
	if _, ok, err := (Trailer{Task: json.RawMessage(`{"init":{}}`)}).ParsedTask(); ok || err == nil {
		t.Error("a task without a type was accepted")
	}
}

// FuzzTrailer: a trailer that parses formats to a line that, as the end
// of any commit message, parses to the same trailer and the same task.
func FuzzTrailer(f *testing.F) {
	f.Add("Approving package revision a/1\n\nkpt:{\"package\":\"a\",\"revision\":\"v1\"}\n")
	f.Add("x kpt:{\"package\":\"a\",\"task\":{\"type\":\"clone\",\"clone\":{\"upstreamRef\":{\"type\":\"oci\",\"oci\":{\"image\":\"i\"}}}}}")
	f.Add("kpt:{\"task\":null}")
	f.Add("kpt:{invalid}")
	f.Fuzz(func(t *testing.T, msg string) {
		tr, found, err := ParseTrailer(msg)
		if err != nil || !found {
			return
		}
		line, err := FormatTrailer(tr)
		if err != nil {
			t.Fatalf("parsed %q but cannot format it: %v", msg, err)
		}
		if strings.Contains(line, "\n") {
			t.Fatalf("trailer line %q spans lines", line)
		}
		back, found, err := ParseTrailer("subject\n\n" + line + "\n")
		if err != nil || !found {
			t.Fatalf("formatted %q does not parse: %v", line, err)
		}
		a, aok, aerr := tr.ParsedTask()
		b, bok, berr := back.ParsedTask()
		if back.Package != tr.Package || back.WorkspaceName != tr.WorkspaceName || back.Revision != tr.Revision ||
			aok != bok || (aerr == nil) != (berr == nil) || !reflect.DeepEqual(normalize(a), normalize(b)) {
			t.Fatalf("round trip of %q: %+v then %+v", msg, tr, back)
		}
	})
}
