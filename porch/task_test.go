package porch

import (
	"reflect"
	"strings"
	"testing"
)

// TestTaskJSON pins each builder's JSON to what Porch's v1alpha1 types
// encode to (field names, order, omitempty: a value struct such as
// GitPackage.SecretRef or the upgrade's refs is always written).
func TestTaskJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		task Task
		want string
	}{
		{"init", InitTask("sample description"), `{"type":"init","init":{"description":"sample description"}}`},
		{"init without description", InitTask(""), `{"type":"init","init":{}}`},
		{"clone git", CloneGitTask("https://github.com/acme/blueprints.git", "/basens", "basens/v2"),
			`{"type":"clone","clone":{"upstreamRef":{"type":"git","git":{"repo":"https://github.com/acme/blueprints.git","ref":"basens/v2","directory":"/basens","secretRef":{"name":""}}}}}`},
		{"clone oci", CloneOCITask("ghcr.io/acme/basens@sha256:abc"),
			`{"type":"clone","clone":{"upstreamRef":{"type":"oci","oci":{"image":"ghcr.io/acme/basens@sha256:abc"}}}}`},
		{"clone http", CloneHTTPTask("https://example.com/p.tgz", "/basens", "sha256:abc"),
			`{"type":"clone","clone":{"upstreamRef":{"type":"http","http":{"url":"https://example.com/p.tgz","directory":"/basens","digest":"sha256:abc"}}}}`},
		{"clone revision", CloneRevisionTask("blueprints.basens.v2"),
			`{"type":"clone","clone":{"upstreamRef":{"upstreamRef":{"name":"blueprints.basens.v2"}}}}`},
		{"edit", EditTask("basens/v3"), `{"type":"edit","edit":{"sourceRef":{"name":"basens/v3"}}}`},
		{"variant edit", VariantEditTask("team-a"), `{"type":"edit","edit":{"packageVariant":"team-a"}}`},
		{"upgrade", UpgradeTask("up/basens/v1", "up/basens/v2", "ns/v4", ResourceMerge),
			`{"type":"upgrade","upgrade":{"oldUpstreamRef":{"name":"up/basens/v1"},"newUpstreamRef":{"name":"up/basens/v2"},"localPackageRevisionRef":{"name":"ns/v4"},"strategy":"resource-merge"}}`},
		{"upgrade, default strategy", UpgradeTask("a", "b", "c", ""),
			`{"type":"upgrade","upgrade":{"oldUpstreamRef":{"name":"a"},"newUpstreamRef":{"name":"b"},"localPackageRevisionRef":{"name":"c"}}}`},
		{"patch", TypeTask(TaskTypePatch), `{"type":"patch"}`},
		{"delete", TypeTask(TaskTypeDelete), `{"type":"delete"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.task.JSON()); got != tc.want {
				t.Errorf("JSON:\n got %s\nwant %s", got, tc.want)
			}
			back, err := ParseTask([]byte(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.task) {
				t.Errorf("ParseTask(JSON) = %+v, want %+v", back, tc.task)
			}
		})
	}
}

// TestParseTaskPorchMade reads tasks from trailers of Porch-made
// repositories (Porch's pkg/externalrepo/git testdata): those Porch still
// models encode back byte for byte; those it dropped keep their type.
func TestParseTaskPorchMade(t *testing.T) {
	for _, tc := range []struct {
		in, typ, back string
	}{
		{`{"type":"init","init":{"description":"sample description"}}`, "init", `{"type":"init","init":{"description":"sample description"}}`},
		{`{"type":"edit","edit":{"sourceRef":{"name":"blueprint-019a512709a93ba7fc2800ce2b02e2e302ddd2cd"}}}`, "edit", `{"type":"edit","edit":{"sourceRef":{"name":"blueprint-019a512709a93ba7fc2800ce2b02e2e302ddd2cd"}}}`},
		{`{"type":"eval","eval":{"image":"render","config":null,"match":{}}}`, "eval", `{"type":"eval"}`},
		{`{"type":"patch","patch":{"patches":[{"file":"cm.yaml","contents":"x","patchType":"CreateFile"}]}}`, "patch", `{"type":"patch"}`},
	} {
		task, err := ParseTask([]byte(tc.in))
		if err != nil {
			t.Fatalf("ParseTask(%s): %v", tc.in, err)
		}
		if string(task.Type) != tc.typ || string(task.JSON()) != tc.back {
			t.Errorf("ParseTask(%s) = %s (type %q)", tc.in, task.JSON(), task.Type)
		}
	}
}

func TestParseTaskErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "expected a JSON object"},
		{`[1]`, "expected a JSON object"},
		{`{"init":{}}`, `expected a "type" field`},
		{`{"type":3}`, "cannot unmarshal"},
		{`{"type":"init","init":"x"}`, "cannot unmarshal"},
	} {
		_, err := ParseTask([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTask(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func TestCommitSubject(t *testing.T) {
	for typ, want := range map[TaskType]string{
		TaskTypeInit:    "Creating new empty revision",
		TaskTypeClone:   "Creating new revision by cloning",
		TaskTypeEdit:    "Creating new revision by copying previous revision",
		TaskTypeUpgrade: "Upgrading revision",
		TaskTypeRender:  "Rendering package",
		TaskTypeNone:    "Intermediate commit",
		TaskTypePatch:   "Intermediate commit: patch",
	} {
		if got := CommitSubject(typ); got != want {
			t.Errorf("CommitSubject(%q) = %q, want %q", typ, got, want)
		}
	}
	if got := ApproveSubject("catalog/basens", 3); got != "Approving package revision catalog/basens/3" {
		t.Errorf("ApproveSubject = %q", got)
	}
}

// FuzzParseTask: a task that parses encodes to JSON that parses to the
// same task, and that JSON is stable.
func FuzzParseTask(f *testing.F) {
	for _, s := range []string{
		`{"type":"init","init":{"description":"d","keywords":["a"]}}`,
		string(CloneGitTask("r", "/d", "v1").JSON()),
		string(UpgradeTask("a", "b", "c", CopyMerge).JSON()),
		`{"type":"eval","eval":{}}`, `{"type":null}`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		task, err := ParseTask(b)
		if err != nil {
			return
		}
		j := task.JSON()
		back, err := ParseTask(j)
		if err != nil {
			t.Fatalf("ParseTask(%s) ok, but its JSON %s does not parse: %v", b, j, err)
		}
		if !reflect.DeepEqual(normalize(back), normalize(task)) {
			t.Fatalf("round trip of %s: %+v != %+v", b, back, task)
		}
		if string(back.JSON()) != string(j) {
			t.Fatalf("JSON not stable: %s then %s", j, back.JSON())
		}
	})
}

// normalize maps an empty keyword list to nil: both encode to nothing.
func normalize(t Task) Task {
	if t.Init != nil && len(t.Init.Keywords) == 0 {
		c := *t.Init
		c.Keywords = nil
		t.Init = &c
	}
	return t
}
