package packaging

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper-cased
	args string
}

// stage is one FROM ... AS name block.
type stage struct {
	from, name string
	ins        []instruction
}

// parseDockerfile reads the Dockerfile's instructions, grouped by stage,
// with build ARGs declared before the first FROM substituted into FROM.
func parseDockerfile(t *testing.T, p string) []stage {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ins []instruction
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		ins = append(ins, instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	globals := map[string]string{}
	var stages []stage
	for _, in := range ins {
		switch {
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			s := stage{from: os.Expand(f[0], func(k string) string { return globals[k] })}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
		case len(stages) == 0 && in.cmd == "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			globals[k] = v
		case len(stages) == 0:
			t.Fatalf("Dockerfile line %d: %s before the first FROM", in.line, in.cmd)
		default:
			stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, in)
		}
	}
	return stages
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.ins {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// TestDockerfile checks the Dockerfile without Docker: a Go builder stage
// making a static binary with the version stamped in, and runtime stages
// on a small base that run as a non-root user, hold no secrets and run
// kptbot (the server by default, as the deploy/ package expects).
func TestDockerfile(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, "../../Dockerfile")
	if len(stages) < 2 {
		t.Fatalf("%d stages: want a multi-stage build", len(stages))
	}
	build := stages[0]
	if !regexp.MustCompile(`^golang:1\.26(\.\d+)?$`).MatchString(build.from) || build.name == "" {
		t.Errorf("builder stage FROM %s AS %q: want golang:1.26 with a name", build.from, build.name)
	}
	buildText := ""
	for _, in := range build.ins {
		buildText += in.cmd + " " + in.args + "\n"
	}
	for _, want := range []string{"CGO_ENABLED=0", "go build", "-X main.version=${VERSION}", "-X main.commit=${COMMIT}", "-X main.date=${DATE}", "./cmd/kptbot"} {
		if !strings.Contains(buildText, want) {
			t.Errorf("the builder stage does not contain %q", want)
		}
	}
	final := stages[len(stages)-1]
	if !strings.HasPrefix(final.from, "gcr.io/distroless/static") || !strings.HasSuffix(final.from, ":nonroot") {
		t.Errorf("the final stage is FROM %s: want gcr.io/distroless/static...:nonroot", final.from)
	}
	names := []string{}
	for _, s := range stages[1:] {
		names = append(names, s.name)
		users := s.all("USER")
		if len(users) == 0 {
			t.Errorf("stage %s: no USER", s.name)
			continue
		}
		user := strings.Split(users[len(users)-1].args, ":")[0]
		if user == "root" || user == "0" || !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(user) {
			t.Errorf("stage %s runs as %q: want a numeric non-root user (so runAsNonRoot can verify it)", s.name, user)
		}
		eps := s.all("ENTRYPOINT")
		if len(eps) != 1 || !regexp.MustCompile(`^\["[^"]*/kptbot"\]$`).MatchString(eps[0].args) {
			t.Errorf("stage %s: ENTRYPOINT %v: want the exec form running kptbot", s.name, eps)
		}
		copied := false
		for _, c := range s.all("COPY") {
			copied = copied || strings.HasPrefix(c.args, "--from="+build.name+" ")
		}
		if !copied || len(s.all("RUN")) > 0 {
			t.Errorf("stage %s: want only the binary copied from %s, nothing run", s.name, build.name)
		}
	}
	if !slices.Contains(names, "ci") {
		t.Error("no ci stage (the image with a shell that GitLab CI jobs need)")
	}
	if cmd := final.all("CMD"); len(cmd) != 1 || cmd[0].args != `["serve", "--config", "/etc/kptbot/config.yaml"]` {
		t.Errorf("final CMD %v: want the server with the config path deploy/ mounts", cmd)
	}
	secret := regexp.MustCompile(`(?i)(token|secret|password|passwd|private[_-]?key|credential)`)
	for _, s := range stages {
		for _, in := range s.ins {
			switch in.cmd {
			case "ARG", "ENV":
				if secret.MatchString(in.args) {
					t.Errorf("Dockerfile line %d: %s %s: secrets must not be build arguments or image variables", in.line, in.cmd, in.args)
				}
			case "ADD":
				t.Errorf("Dockerfile line %d: ADD (use COPY; ADD fetches URLs and unpacks archives)", in.line)
			case "COPY":
				if regexp.MustCompile(`\.(pem|key|env)\b|\.netrc|\.ssh`).MatchString(in.args) {
					t.Errorf("Dockerfile line %d: COPY %s copies a credential", in.line, in.args)
				}
			}
		}
	}

	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	patterns := strings.Fields(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(string(ignore), ""))
	for _, want := range []string{".git", "bin"} {
		if !slices.Contains(patterns, want) {
			t.Errorf(".dockerignore does not exclude %s", want)
		}
	}
	for _, p := range patterns {
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "*.go"} {
			if p == needed {
				t.Errorf(".dockerignore excludes %s, which the build needs", p)
			}
		}
	}
}
