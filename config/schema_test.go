package config

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var updateSchema = flag.Bool("update", false, "rewrite kptbot.schema.json")

// TestSchemaUpToDate keeps the committed schema (what editors point at) in
// step with the types.
func TestSchemaUpToDate(t *testing.T) {
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateSchema {
		if err := os.WriteFile("kptbot.schema.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("kptbot.schema.json")
	if err != nil || !bytes.Equal(want, got) {
		t.Errorf("config/kptbot.schema.json is out of date: run go test ./config -update")
	}
}
