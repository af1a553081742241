// Package docs holds no code: its tests keep the documentation true. Every
// kptbot.yaml and server configuration example is parsed by kptbot's own
// parsers, every field of both files is documented, every relative link
// resolves, and the README's quickstart runs as written.
package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/config"
)

// block is one fenced code block of a Markdown file.
type block struct {
	file, info, body string
	line             int
}

// fencedBlocks returns the fenced code blocks of a Markdown file, with
// their info strings ("yaml kptbot.yaml", "sh quickstart").
func fencedBlocks(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []block
	var cur *block
	var fence string
	indent := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			fence = trimmed[:strings.LastIndex(trimmed, "`")+1]
			indent = len(line) - len(trimmed) // a fence in a list item
			cur = &block{file: path, info: strings.TrimSpace(trimmed[len(fence):]), line: n}
		case cur != nil && strings.HasPrefix(trimmed, fence) && strings.TrimSpace(trimmed) == fence:
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body += strings.TrimPrefix(line, strings.Repeat(" ", min(indent, len(line)-len(trimmed)))) + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: unterminated code block", path, cur.line)
	}
	return out
}

// markdownFiles are the README and every page under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/*.md: %v %v", files, err)
	}
	return append(files, "../README.md")
}

// Info strings that mark a block as a configuration example to validate.
const (
	infoKptbotYAML   = "yaml kptbot.yaml"
	infoServerConfig = "yaml server-config"
)

// TestConfigExamples parses every tagged kptbot.yaml and server
// configuration example with the parsers kptbot uses, expands every
// PackageVariantSet as the bot does, and refuses untagged examples (which
// no test would check).
func TestConfigExamples(t *testing.T) {
	t.Parallel()
	counts := map[string]int{}
	for _, path := range markdownFiles(t) {
		for _, b := range fencedBlocks(t, path) {
			where := b.file + ":" + strconv.Itoa(b.line)
			info := b.info
			if strings.HasPrefix(info, infoServerConfig+" ") {
				info = infoServerConfig // a tagged variant, such as "yaml server-config try-it"
			}
			switch info {
			case infoKptbotYAML:
				counts[b.info]++
				f, err := config.Parse(where, []byte(b.body))
				if err != nil {
					t.Errorf("%s: kptbot.yaml example does not parse:\n%v", where, err)
					continue
				}
				expandSets(t, where, config.Defaults(f))
			case infoServerConfig:
				counts[b.info]++
				if _, err := config.ParseServer(where, []byte(b.body)); err != nil {
					t.Errorf("%s: server configuration example does not parse:\n%v", where, err)
				}
			default:
				if strings.HasPrefix(b.info, "yaml") && strings.Contains(b.body, "apiVersion: "+config.APIVersion) && strings.Contains(b.body, "\nkind: ") {
					t.Errorf("%s: a kptbot.yaml example not tagged ```%s: tag it so this test checks it", where, infoKptbotYAML)
				}
				if strings.HasPrefix(b.info, "yaml") && regexp.MustCompile(`(?m)^(github|gitlab):\s*(#.*)?$`).MatchString(b.body) {
					t.Errorf("%s: a server configuration example not tagged ```%s: tag it so this test checks it", where, infoServerConfig)
				}
			}
		}
	}
	// The examples the issue asks for: an upstream, a downstream and a
	// fleet repository; a GitHub App server and a GitLab group server.
	if counts[infoKptbotYAML] < 3 || counts[infoServerConfig] < 3 {
		t.Errorf("found %v: the documentation lost examples", counts)
	}
}

// expandSets expands each PackageVariantSet of f over one repository per
// target that its selector matches, as the bot's reverse index does.
func expandSets(t *testing.T, where string, f *config.File) {
	t.Helper()
	for _, set := range f.Sets {
		var repos []config.Object
		for _, tg := range set.Spec.Targets {
			if tg.RepositorySelector != nil {
				repos = append(repos, config.Object{Name: "acme/selected", Labels: tg.RepositorySelector.MatchLabels})
			}
		}
		pvs, err := config.Expand(set, config.ExpandInput{Upstream: config.Object{Name: set.Spec.Upstream.Package}, Repositories: repos})
		if err != nil {
			t.Errorf("%s: PackageVariantSet %s does not expand: %v", where, set.Metadata.Name, err)
			continue
		}
		for _, pv := range pvs {
			if strings.Contains(pv.Metadata.Name, "/") {
				t.Errorf("%s: PackageVariantSet %s generates the variant name %q", where, set.Metadata.Name, pv.Metadata.Name)
			}
		}
	}
}

// TestEveryFieldDocumented requires configuration.md to name every field
// of kptbot.yaml and of the server configuration, so a field added to the
// config package without documentation fails here.
func TestEveryFieldDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var spans []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(stripCode(string(b)), -1) {
		spans = append(spans, m[1])
	}
	documented := func(field string) bool {
		re := regexp.MustCompile(`(^|[^A-Za-z])` + regexp.QuoteMeta(field) + `($|[^A-Za-z])`)
		return slices.ContainsFunc(spans, re.MatchString)
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || ty.PkgPath() != reflect.TypeOf(config.File{}).PkgPath() || seen[ty] {
			return
		}
		seen[ty] = true
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name != "" && name != "apiVersion" && name != "kind" && !documented(name) {
				t.Errorf("configuration.md does not document %s%s", path, name)
			}
			walk(f.Type, path+name+".")
		}
	}
	for _, root := range []any{config.Repository{}, config.PackageVariant{}, config.PackageVariantSet{}, config.Server{}} {
		walk(reflect.TypeOf(root), reflect.TypeOf(root).Name()+": ")
	}
}

// TestLinks checks that every relative link in the README and docs/ names
// a file that exists and, with a #fragment, a heading in it.
func TestLinks(t *testing.T) {
	t.Parallel()
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, path := range markdownFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(stripCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			resolved := path
			if file != "" {
				resolved = filepath.Join(filepath.Dir(path), file)
			}
			data, err := os.ReadFile(resolved)
			if err != nil && writtenElsewhere[filepath.ToSlash(filepath.Clean(resolved))] {
				t.Logf("%s: link %s: not written yet", path, target)
				continue
			}
			if err != nil {
				if fi, serr := os.Stat(resolved); serr == nil && fi.IsDir() && frag == "" {
					continue
				}
				t.Errorf("%s: link %s: %v", path, target, err)
				continue
			}
			if frag != "" && !slices.Contains(headingSlugs(string(data)), frag) {
				t.Errorf("%s: link %s: %s has no heading #%s (it has %v)", path, target, resolved, frag, headingSlugs(string(data)))
			}
		}
	}
}

// writtenElsewhere are pages other work on the project writes (the
// security policy at the root): links to them may come first.
var writtenElsewhere = map[string]bool{"../SECURITY.md": true}

// stripCode removes fenced code blocks, whose text is not Markdown.
func stripCode(s string) string {
	return regexp.MustCompile("(?s)\n\\s*```.*?\n\\s*```").ReplaceAllString(s, "\n")
}

// headingSlugs are the anchors GitHub gives a file's headings.
func headingSlugs(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^#+\s+(.+)$`).FindAllStringSubmatch(stripCode(s), -1) {
		slug := strings.ToLower(strings.TrimSpace(m[1]))
		slug = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`).ReplaceAllString(slug, "")
		out = append(out, strings.ReplaceAll(slug, " ", "-"))
	}
	return out
}

// TestReadmeIsShort keeps the README an entry point: details live in docs/.
func TestReadmeIsShort(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 200 {
		t.Errorf("README.md has %d lines: move details into docs/ (at most 200)", n)
	}
}

// TestNoOutsideReferences walks the repository (deploy/, examples/ and
// scripts/ included) for references to files that are not in it.
func TestNoOutsideReferences(t *testing.T) {
	t.Parallel()
	banned := []string{"../" + "shared", "DESIGN" + ".md", "/work/" + "shared"}
	root := ".."
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || (p != root && (name == "bin" || name == "dist")) {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range banned {
			if strings.Contains(string(b), s) {
				t.Errorf("%s mentions %s, which is not part of the repository", p, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestQuickstart runs the README's quickstart blocks (```sh quickstart)
// in bash from the repository root, as a new user would paste them, then
// `make demo`, whose first half is scripts/porch-demo.sh.
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kptbot and runs the quickstart")
	}
	for _, tool := range []string{"bash", "git", "make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	var script []string
	for _, b := range fencedBlocks(t, "../README.md") {
		if b.info == "sh quickstart" {
			script = append(script, b.body)
		}
	}
	if len(script) == 0 {
		t.Fatal("README.md has no ```sh quickstart block")
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp, "GIT_AUTHOR_NAME=New User", "GIT_AUTHOR_EMAIL=new@example.com",
		"GIT_COMMITTER_NAME=New User", "GIT_COMMITTER_EMAIL=new@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = "..", env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's quickstart fails: %v\n%s", err, out)
	}
	for _, want := range []string{"Fetched 1 package(s).", "Updated 1 package(s).", "diff --git", "Successfully rendered team-a",
		"basens/more-cpu published as basens/v5", "name: catalog.basens.more-cpu"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quickstart's output lacks %q:\n%s", want, out)
		}
	}
	cmd = exec.Command("make", "demo")
	cmd.Dir, cmd.Env = "..", env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
}
